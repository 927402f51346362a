// Writes a ledger row's packed paper list (items.ts, plain layout) from JavaScript, byte by
// byte: the model pass rewrites every row of a reader with a model in their own order (a broad digest
// holds ~190 papers; building hex strings as encodeItems does cost 4x more).
/** The plain packed list of papers `ids` (display order) with row masks `masks`, above `fromPaper`. */
export function packItems(ids: readonly number[], masks: readonly number[], fromPaper: number): Buffer {
  if (ids.length === 0) return Buffer.alloc(0);
  let maxOff = 1;
  let maxMask = 1;
  for (let i = 0; i < ids.length; i++) {
    const off = ids[i]! - fromPaper;
    if (off < 1) throw new RangeError('a packed paper must be above the row watermark');
    if (off > maxOff) maxOff = off;
    if (masks[i]! > maxMask) maxMask = masks[i]!;
  }
  const ow = maxOff.toString(16).length;
  let mw = maxMask.toString(16).length;
  if ((ow + mw) % 2 === 1) mw++;
  const width = ow + mw;
  const out = Buffer.alloc(1 + (ids.length * width) / 2);
  out[0] = ow * 16 + mw;
  let nib = 0;
  const put = (v: number): void => {
    const at = 1 + (nib >> 1);
    out[at] = nib & 1 ? out[at]! | v : v << 4;
    nib++;
  };
  for (let i = 0; i < ids.length; i++) {
    const off = ids[i]! - fromPaper;
    for (let k = ow - 1; k >= 0; k--) put(hexDigit(off, k));
    const mask = masks[i]!;
    for (let k = mw - 1; k >= 0; k--) put(hexDigit(mask, k));
  }
  return out;
}

/** Hex digit k of a non-negative integer: the first 8 depend only on its low 32 bits, so a shift finds them. */
function hexDigit(v: number, k: number): number {
  return k < 8 ? (v >>> (4 * k)) & 15 : Math.floor(v / 16 ** k) % 16;
}
