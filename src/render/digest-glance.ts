// What makes a digest read at a glance on a phone: the per-topic counts and the best few titles at the
// top (so the first 390 x 844 screen shows both), and the compact lines grouped under their topic.
//
// Grouping keeps the planner's order (the ranking): a paper goes under its best topic, the first of its
// matched topics in the reader's own order (the loader's order), and the others stay named on its line;
// the groups follow the rank of their best line. Only the compact lines are grouped: the papers in full
// above them are the top picks, in rank order.
import { htmlWireLength } from './encode/html-body.ts';
import { topicLabel } from '../match/label.ts';
import { plural } from '../words.ts';
import type { DigestPaperView, DigestView } from './digest-types.ts';
import { escapeValue } from './render-templates.ts';
import { safeHref, tidy, trimOnWord } from './render-format.ts';

/** Titles listed at the top, and from how many papers on (a two-paper digest shows both cards at once). */
const PICKS = 5;
const PICKS_FROM = 3;
/** Topics named in the counts line; the rest are summed up as "+N more topics". */
const GLANCE_TOPICS = 8;
/** A top pick's title is cut here: it is one line of a list, the card below has it whole. */
const PICK_TITLE_CHARS = 140;

/**
 * The best few papers for the top of the email (none for a digest of one or two papers), each linked to
 * its place on the web view (`#p<n>`, where its whole abstract opens): one tap from the email's short one.
 */
export function topPicks(
  papers: ReadonlyArray<DigestPaperView>,
  total: number,
  webView: string,
  cap?: number | null,
): Array<{ url: string; title: string }> {
  const shown = cap != null && cap > 0 ? Math.min(total, Math.trunc(cap)) : total;
  if (shown < PICKS_FROM) return [];
  const at = (i: number) => (webView === '#' ? safeHref(papers[i]!.url) : `${webView}#p${i + 1}`);
  return papers.slice(0, Math.min(PICKS, shown)).map((p, i) => ({ url: at(i), title: trimOnWord(tidy(p.title), PICK_TITLE_CHARS) }));
}

/** Per topic, how many of the digest's papers it matched, most first; from the loader when it counted them. */
export function topicCounts(view: Pick<DigestView, 'papers' | 'topicCounts'>): Array<{ text: string; count: number }> {
  if (view.topicCounts !== undefined) return view.topicCounts;
  const counts = new Map<string, number>();
  for (const p of view.papers) for (const m of p.matchedTopics) counts.set(m.text, (counts.get(m.text) ?? 0) + 1);
  return [...counts].map(([text, count]) => ({ text, count }));
}

/**
 * "diffusion models 24 · agents 20 · 3 you may also like": '' when it would only repeat the intro (one
 * topic, no suggestions).
 */
export function glanceLine(view: Pick<DigestView, 'papers' | 'topicCounts'>, suggestions: number): string {
  const counts = topicCounts(view)
    .map((c, i) => ({ label: topicLabel(tidy(c.text)), count: c.count, i }))
    .filter((c) => c.count > 0 && c.label !== '')
    .sort((a, b) => b.count - a.count || a.i - b.i);
  if (counts.length <= 1 && suggestions === 0) return '';
  const named = counts.slice(0, GLANCE_TOPICS).map((c) => `${c.label} ${c.count}`);
  if (counts.length > GLANCE_TOPICS) named.push(`+${plural(counts.length - GLANCE_TOPICS, 'more topic', 'more topics')}`);
  if (suggestions > 0) named.push(`${suggestions} you may also like`);
  return named.join(' · ');
}

/** A group's heading in both parts, and its size in the HTML as sent. */
export interface GroupHeading {
  html: string;
  text: string;
  size: number;
}

/** A paper's group: its first matched topic ('' when none is left, e.g. deleted since planning). */
function groupOf(paper: DigestPaperView): string {
  return paper.matchedTopics[0]?.text ?? '';
}

/**
 * A group's heading: the topic's name and its mute link (the lines under it name only their other topics;
 * one mute per topic is enough where its papers stand together).
 */
function heading(key: string, muteUrl: string): GroupHeading {
  const label = key === '' ? 'Other papers' : topicLabel(tidy(key));
  const mute = key === '' ? '' : ` <a href="${escapeValue(safeHref(muteUrl))}" class="pd-b">mute</a>`;
  const html = `<h3 class="pd-gh">${escapeValue(label)}${mute}</h3>`;
  return { html, text: `${label}\n${'-'.repeat(Math.min(60, Math.max(3, label.length)))}\n\n`, size: htmlWireLength(html) };
}

/** The compact lines' groups as they are chosen, then the lines in group order with each group's heading. */
export function compactGroups() {
  const headings = new Map<string, GroupHeading>();
  const shown = new Set<string>();
  const groups: string[] = [];
  const muteOf = new Map<string, string>();
  const headingFor = (key: string, paper?: DigestPaperView): GroupHeading => {
    let h = headings.get(key);
    if (h === undefined) headings.set(key, (h = heading(key, paper?.matchedTopics[0]?.muteUrl ?? muteOf.get(key) ?? '#')));
    return h;
  };
  return {
    /** The bytes a line of this paper adds for its group's heading: none once the group has a line. */
    headingSize(paper: DigestPaperView): number {
      const key = groupOf(paper);
      return shown.has(key) ? 0 : headingFor(key, paper).size;
    },
    /** The paper's line was taken as line `index`. */
    add(paper: DigestPaperView, index: number): void {
      const key = groupOf(paper);
      shown.add(key);
      muteOf.set(key, paper.matchedTopics[0]?.muteUrl ?? '#');
      groups[index] = key;
    },
    /** The taken lines grouped (stable), each group's first line carrying its heading. */
    order<T>(lines: readonly T[]): Array<{ chosen: T; heading: GroupHeading | undefined }> {
      const byGroup = new Map<string, T[]>();
      lines.forEach((line, i) => {
        const key = groups[i] ?? '';
        const list = byGroup.get(key);
        if (list === undefined) byGroup.set(key, [line]);
        else list.push(line);
      });
      const out: Array<{ chosen: T; heading: GroupHeading | undefined }> = [];
      for (const [key, list] of byGroup) list.forEach((chosen, i) => out.push({ chosen, heading: i === 0 ? headingFor(key) : undefined }));
      return out;
    },
  };
}
