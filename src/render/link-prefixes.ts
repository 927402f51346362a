// A digest's link prefixes as bytes, made once per digest: every feedback link of a digest starts with
// PUBLIC_URL/feedback/<its token>/ and every follow link with PUBLIC_URL/follow/<its token>/ (Links), so the
// writers copy those bytes and write only each link's tail (a paper id and a direction). A broad digest
// has ~150 such links in each part; written whole, each was a Buffer#write of ~75 characters (~150 ns a
// call) and, in the text part, a pass over each byte.
//
// The HTML gets the prefix's bytes as they are (the links are canonical: reader-shape.ts plainSlots). The
// text part gets the prefix encoded for the column the link starts at (encodeQpRun: its soft break falls
// inside the prefix), cached per column: a template's feedback links all start at one column, a follow
// link's depends on the length of the author's name.
import { encodeQpRun, type QpRun } from '../mail/qp-body.ts';

/** Columns remembered per prefix (a digest's follow links start at as many columns as name lengths). */
const MAX_COLUMNS = 64;

export class LinkPrefixBytes {
  private readonly bytes: Array<Buffer | undefined>;
  private readonly runs: Array<Map<number, QpRun> | undefined>;

  /** `bySlot[slot]`: what the value in that reader slot starts with (reader-shape.ts linkPrefixSlots). */
  constructor(private readonly bySlot: ReadonlyArray<string | undefined>) {
    this.bytes = bySlot.map((p) => (p === undefined ? undefined : Buffer.from(p, 'latin1')));
    this.runs = bySlot.map((p) => (p === undefined ? undefined : new Map<number, QpRun>()));
  }

  /** The prefix's characters in `slot` when `value` starts with them (else 0: the value is written whole). */
  prefixLength(slot: number, value: string): number {
    const prefix = this.bySlot[slot];
    return prefix !== undefined && value.length > prefix.length && value.startsWith(prefix) ? prefix.length : 0;
  }

  /** The prefix's bytes in `slot` (after prefixLength said the value has it). */
  html(slot: number): Buffer {
    return this.bytes[slot]!;
  }

  /** The prefix in `slot` encoded as quoted-printable from column `col` (after prefixLength said the value has it). */
  text(slot: number, col: number): QpRun {
    const runs = this.runs[slot]!;
    let run = runs.get(col);
    if (run === undefined) {
      run = encodeQpRun(this.bySlot[slot]!, col);
      if (runs.size >= MAX_COLUMNS) runs.clear();
      runs.set(col, run);
    }
    return run;
  }
}
