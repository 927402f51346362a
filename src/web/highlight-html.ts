// Highlighter segments -> safe HTML: every character escaped, matched words wrapped in <mark>.
import { escapeHtml } from '../html.ts';
import type { Segment } from '../match/highlight.ts';

export function segmentsToHtml(segments: Segment[]): string {
  return segments.map((s) => (s.hit ? `<mark>${escapeHtml(s.text)}</mark>` : escapeHtml(s.text))).join('');
}

/**
 * About `max` characters of the text around its first highlighted word (cut on word boundaries,
 * with … where text was left out), so that a long abstract still shows why it matched.
 */
export function excerpt(segments: Segment[], max: number): Segment[] {
  const full = segments.map((s) => s.text).join('');
  if (full.length <= max) return segments;
  let offset = 0;
  let firstHit = -1;
  for (const s of segments) {
    if (s.hit) {
      firstHit = offset;
      break;
    }
    offset += s.text.length;
  }
  let start = firstHit > max / 3 ? firstHit - Math.floor(max / 4) : 0;
  if (start > 0) {
    const space = full.indexOf(' ', start);
    start = space >= 0 && space < firstHit ? space + 1 : start;
  }
  let end = Math.min(full.length, start + max);
  if (end < full.length) {
    const space = full.lastIndexOf(' ', end);
    if (space > start) end = space;
  }
  const out: Segment[] = [];
  if (start > 0) out.push({ text: '… ', hit: false });
  offset = 0;
  for (const s of segments) {
    const a = Math.max(start, offset);
    const b = Math.min(end, offset + s.text.length);
    if (b > a) out.push({ text: s.text.slice(a - offset, b - offset), hit: s.hit });
    offset += s.text.length;
  }
  if (end < full.length) out.push({ text: ' …', hit: false });
  return out;
}
