// Which highlight slots of a card a reader sees lit (card-highlight.ts: one card per paper, a slot per
// highlighted stretch naming the topics whose words it is), and the bytes their tags add: what
// digest-email.ts needs to size and join a card for one reader.
import { encodeHtmlSegment } from './encode/html-body.ts';
import { LIT_PER_CARD, type CardBytes, type LitSlots } from './card-cache.ts';
import { HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN } from './card-highlight.ts';

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
 * A mask costs the reader's lit slots (the card's slotsOfTopic and spans), not the card's slots times the
 * reader's topics: walking those was 7% of a diverse sending thread's CPU.
 * `keys`: the reader's matched topics as the card cache looks them up (topicKeyOf); `key`: them as one
 * string (PaperTopics.litKey).
 */
export function litSlots(card: CardBytes, keys: readonly string[], key: string): LitSlots {
  const known = card.lit.get(key);
  if (known !== undefined) return known;
  const keep = card.lit.size < LIT_PER_CARD;
  const lit = keep ? new Uint8Array(card.slots.length) : scratchMask(card.slots.length);
  const { full, compact } = card.spans;
  const { start, slots } = card.slotsOfTopic;
  let fullSpans = 0;
  let compactSpans = 0;
  for (let m = 0; m < keys.length; m++) {
    const t = card.topicIndex.get(keys[m]!);
    if (t === undefined) continue;
    for (let j = start[t]!, end = start[t + 1]!; j < end; j++) {
      const s = slots[j]!;
      if (lit[s] !== 0) continue;
      lit[s] = 1;
      fullSpans += full[s]!;
      compactSpans += compact[s]!;
    }
  }
  const made = { lit, extra: { full: fullSpans * SLOT_BYTES, compact: compactSpans * SLOT_BYTES } };
  if (keep) card.lit.set(key, made);
  return made;
}

/** A new digest: the masks of the one before are no longer read (scratchMask). */
export function startLitMasks(): void {
  litScratchUsed = 0;
}
