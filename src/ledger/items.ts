// The paper list of one ledger row, packed. The planner's statements write it in SQL (SQL_PLAN_ROWS in create.ts;
// migration 002 converted older rows the same way); everything else reads it through decodeItems.
//
// Layout: one header byte, then one fixed-width record per paper in display order. The header's high
// nibble is the width of a paper's offset in hex digits, its low nibble the width of its topic mask; a
// record is the offset (paper id minus the row's from_paper, the subscriber's watermark: always >= 1)
// followed by the mask (bit i = the i-th id of the row's topic_ids matched). Widths are the smallest
// that fit the row's largest values, rounded so a record is whole bytes.
//
// Decision: packed rather than JSON (about 2 bytes a paper instead of 47: BENCHMARKS.md, "The ledger");
// display order is stored, so ids are not delta-encoded; SQLite builds the blob with printf and unhex.
//
// Mapped layout (planned once per topic set, see plan/groups.ts): byte 0x00, then k, then k bytes
// m[0..k-1], then a list in the layout above whose masks are over the GROUP's bits (its unmuted queries
// in ascending query id): group bit j stands for the row's bit m[j]. Subscribers with the same unmuted
// topics but typed in another order (or with muted topics among them) then share one list byte for byte;
// only the few bytes of m are their own. A plain list never starts with 0x00 (its offset width is >= 1),
// so a reader tells the two apart by the first byte; rows written before this layout read as before.
// A third layout, a reference to query lists (first byte 0x01, lists.ts), is read merged into a plain list
// (ListReader.plain, plainItems) before it reaches these functions.

export interface PackedItem {
  paperId: number;
  /** Indices into the row's topic ids (its subscriber's topics in their order when planned). */
  topicBits: number[];
}

/** A decoded paper of a ledger row: the paper and the topic ids that matched it. */
export interface LedgerItem {
  paperId: number;
  topicIds: number[];
}

/** First byte of a mapped list (see the header). */
const MAPPED = 0;

/**
 * Reads a row's packed list. `fromPaper` is the row's from_paper; `topicIds` its topic_ids column.
 * Throws on a malformed blob (a row the planner did not write): the caller fails that row alone.
 */
export function decodeItems(blob: Uint8Array, fromPaper: number, topicIds: string): LedgerItem[] {
  const ids = parseTopicIds(topicIds);
  const out: LedgerItem[] = [];
  eachItem(blob, fromPaper, ids.length, (paperId, mask) => out.push({ paperId, topicIds: maskIds(mask, ids) }));
  return out;
}

/** A row's topic_ids column as numbers (in the order its masks' bits refer to). */
export function parseTopicIds(topicIds: string): number[] {
  return topicIds === '' ? [] : topicIds.split(',').map(Number);
}

/** The topic ids a row mask (bit i = ids[i]) stands for. */
export function maskIds(mask: number, ids: readonly number[]): number[] {
  const topics: number[] = [];
  for (let bit = 0; bit < ids.length; bit++) if (mask & (1 << bit)) topics.push(ids[bit]!);
  return topics;
}

/**
 * Walks a row's packed list in display order without making anything: `fn(paperId, mask)` per paper, the
 * mask over the row's bits (bit i = the i-th of its `topicCount` topic ids). Returns the number of papers.
 * Decision: the sending loader made an object and an array per paper held (~190 in a broad digest, of which
 * the email shows 50), and a hex string sliced twice per paper; in a broad 20k run they were the largest
 * item of what survived the young generation (175 of 667 MB sampled). Reading nibbles in place makes none.
 */
export function eachItem(blob: Uint8Array, fromPaper: number, topicCount: number, fn: (paperId: number, mask: number) => void): number {
  if (blob.length === 0) return 0;
  let map: Uint8Array | undefined;
  let start = 0;
  if (blob[0] === MAPPED) {
    const k = blob[1] ?? 0;
    map = blob.subarray(2, 2 + k);
    start = 2 + k;
    if (k === 0 || map.length !== k || map.some((bit) => bit >= topicCount) || blob.length <= start) {
      throw new Error(`malformed mapped paper list (${k} bits for ${topicCount} topics, ${blob.length} bytes)`);
    }
  }
  const header = blob[start]!;
  const ow = header >> 4;
  const mw = header & 15;
  const width = ow + mw;
  const nibbles = (blob.length - start - 1) * 2;
  if (ow === 0 || width % 2 !== 0 || nibbles % width !== 0) throw new Error(`malformed paper list (header ${header}, ${blob.length} bytes)`);
  const data = start + 1;
  // Nibble i of the records: high half of byte data + i/2 when i is even, low half when odd.
  const nibble = (i: number) => {
    const b = blob[data + (i >> 1)]!;
    return i & 1 ? b & 15 : b >> 4;
  };
  let n = 0;
  for (let at = 0; at < nibbles; at += width) {
    let off = 0;
    for (let i = 0; i < ow; i++) off = off * 16 + nibble(at + i);
    let mask = 0;
    if (mw === 0) mask = 1;
    else for (let i = 0; i < mw; i++) mask = mask * 16 + nibble(at + ow + i);
    if (map) mask = remapMask(mask, map);
    fn(fromPaper + off, mask);
    n++;
  }
  return n;
}

/** A group mask as the row's mask: group bit j is the row's bit map[j]. */
function remapMask(mask: number, map: Uint8Array): number {
  let out = 0;
  for (let j = 0; j < map.length; j++) if (mask & (1 << j)) out |= 1 << map[j]!;
  return out;
}

/**
 * A plain packed list (masks over group bits) as one row's mapped list: `map[j]` is the row's bit for
 * group bit j. What the planner's SQL writes for a grouped row whose map is not the identity (tests).
 */
export function mapItems(list: Uint8Array, map: number[]): Buffer {
  if (list.length === 0) return Buffer.alloc(0);
  return Buffer.concat([Buffer.from([MAPPED, map.length, ...map]), list]);
}

/** Packs a list the way the planner's SQL does (tests, and rows written from JavaScript). */
export function encodeItems(items: PackedItem[], fromPaper: number): Buffer {
  if (items.length === 0) return Buffer.alloc(0);
  const offs = items.map((i) => i.paperId - fromPaper);
  const masks = items.map((i) => i.topicBits.reduce((m, b) => m | (1 << b), 0));
  if (offs.some((o) => o < 1)) throw new RangeError('a packed paper must be above the row watermark');
  const ow = Math.max(...offs).toString(16).length;
  let mw = Math.max(...masks).toString(16).length;
  if ((ow + mw) % 2 === 1) mw++;
  let hex = (ow * 16 + mw).toString(16).padStart(2, '0');
  for (let i = 0; i < items.length; i++) hex += offs[i]!.toString(16).padStart(ow, '0') + masks[i]!.toString(16).padStart(mw, '0');
  return Buffer.from(hex, 'hex');
}
