// Which highlight slots of a card a reader sees lit (card-highlight.ts: one card per paper, a slot per
// highlighted stretch naming the topics whose words it is), and the bytes their tags add: what
// digest-email.ts needs to size and join a card for one reader.
import { encodeHtmlSegment } from './encode/html-body.ts';
import { LIT_PER_CARD, type CardBytes, type EncodedBlock, type LitSlots } from './card-cache.ts';
import { HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN, topicKeyOf } from './card-highlight.ts';
import type { DigestPaperView } from './digest-types.ts';

/** The highlight span's tags, encoded once: a lit slot costs a reader two Buffer references. */
export const OPEN_SEG = encodeHtmlSegment(HIGHLIGHT_OPEN);
export const CLOSE_SEG = encodeHtmlSegment(HIGHLIGHT_CLOSE);
const SLOT_BYTES = OPEN_SEG.size + CLOSE_SEG.size;

/**
 * Lit masks not kept on their card (its LIT_PER_CARD are taken) are written here, one digest at a time:
 * rendering is synchronous and a digest's masks are read only before renderDigestEmail returns, so the
 * next digest starts over (startLitMasks). A bigger one replaces it when a digest needs more.
 */
let litScratch = new Uint8Array(16_384);
let litScratchUsed = 0;

function scratchMask(slots: number): Uint8Array {
  if (litScratchUsed + slots > litScratch.length) {
    litScratch = new Uint8Array(Math.max(litScratch.length * 2, slots));
    litScratchUsed = 0;
  }
  const mask = litScratch.subarray(litScratchUsed, litScratchUsed + slots);
  mask.fill(0);
  litScratchUsed += slots;
  return mask;
}

/**
 * The slots lit for this reader: those naming one of the topics that matched the paper for them. Kept on
 * the card per topic set, up to LIT_PER_CARD: a broad paper has dozens of slots, and every reader of it asked
 * again. Past that (a paper matched by dozens of distinct phrases meets a new set every few readers), the
 * mask is made in the digest's scratch and not kept. Decision: making and keeping every set's mask, and
 * emptying the map when full, was 27% of the bytes a diverse digest allocated (sampling heap profile).
 * `key`: the reader's matched topics as one string (PaperTopics.litKey).
 */
export function litSlots(card: CardBytes, paper: DigestPaperView, key: string): LitSlots {
  const known = card.lit.get(key);
  if (known !== undefined) return known;
  const keep = card.lit.size < LIT_PER_CARD;
  const lit = keep ? new Uint8Array(card.slots.length) : scratchMask(card.slots.length);
  const matched = paper.matchedTopics;
  for (let m = 0; m < matched.length; m++) {
    const t = card.topicIndex.get(topicKeyOf(matched[m]!.highlight ?? matched[m]!.text));
    if (t === undefined) continue;
    for (let k = 0; k < card.slots.length; k++) if (lit[k] === 0 && card.slots[k]!.includes(t)) lit[k] = 1;
  }
  const made = { lit, extra: { full: litExtra(card.full, lit), compact: litExtra(card.compact, lit) } };
  if (keep) card.lit.set(key, made);
  return made;
}

/** Bytes the lit slots' tags add to a block. */
function litExtra(block: EncodedBlock, lit: Uint8Array): number {
  let n = 0;
  for (const item of block.html) {
    if (item === null) continue;
    if ('slot' in item) {
      if (item.open && lit[item.slot]) n += SLOT_BYTES;
    } else if ('fixed' in item) {
      const { slotOf } = item.fixed;
      for (let k = 0; k < slotOf.length; k++) if (slotOf[k]! >= 0 && lit[slotOf[k]!]) n += SLOT_BYTES;
    }
  }
  return n;
}

/** A new digest: the masks of the one before are no longer read (scratchMask). */
export function startLitMasks(): void {
  litScratchUsed = 0;
}
