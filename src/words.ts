// Wording shared by every stage that talks to a person (CLI lines, emails, pages): a leaf module, so
// the CLI, reports and ingest need not import the renderer to say "1 paper".

/** "1 paper" / "3 papers". */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
