// One line of `digest doctor`: what was checked, how it went, and what to do when it did not go well.
export interface Check {
  /** relay, tls, auth, spf, dkim, dmarc, public-url, database, source hf, … */
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** What to do about it (warn and fail). */
  fix?: string;
}

/** "ok    spf: …", "FAIL  relay tls: … — fix: …" */
export function checkLine(c: Check): string {
  const mark = c.status === 'ok' ? 'ok  ' : c.status === 'warn' ? 'warn' : 'FAIL';
  return `${mark}  ${c.name}: ${c.detail}${c.fix && c.status !== 'ok' ? ` — fix: ${c.fix}` : ''}`;
}
