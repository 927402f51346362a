// A like: topic's examples must be papers or looked-up examples the store holds: an import does not look
// them up on arXiv (the door does), so every line naming another is refused with the file, before any
// write, on both engines (each gives its own `missing` lookup).
import { unknownExample } from '../match/like/like.ts';
import { parseTopic } from '../match/parse.ts';
import { ImportRefused, LineReport } from './import-report.ts';
import type { StagedRow } from './import-types.ts';

/** A staged row's topics: [text as typed, canonical query] in the order given. */
export const stagedTopics = (row: StagedRow) => JSON.parse(row.topics) as Array<[text: string, fts: string]>;

type Staged = StagedRow & { rowid: number };

/** Every staged row, `size` at a time, in file order. */
export function* stagedChunks(read: (after: number, limit: number) => Staged[], size: number): Generator<Staged[]> {
  for (let rows = read(0, size); rows.length > 0; rows = read(rows[rows.length - 1]!.rowid, size)) yield rows;
}

export async function refuseUnknownExamples(
  chunks: Iterable<StagedRow[]>,
  missing: (ids: string[]) => readonly string[] | Promise<readonly string[]>,
  name: string,
): Promise<void> {
  const bad = new LineReport();
  for (const rows of chunks) {
    const likes = rows.flatMap((row) => stagedTopics(row).map(([text]) => ({ row, text, ids: parseTopic(text).like })).filter((l) => l.ids !== null));
    if (likes.length === 0) continue;
    const gone = new Set(await missing([...new Set(likes.flatMap((l) => l.ids!))]));
    for (const l of likes) {
      const id = l.ids!.find((x) => gone.has(x));
      if (id !== undefined) bad.add(l.row.line, `topics: "${l.text}": ${unknownExample(id).message}`);
    }
  }
  if (bad.count > 0) throw new ImportRefused(name, bad);
}
