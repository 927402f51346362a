// What a card shows of one reader's paper, checked and escaped once per paper: the highlighter's key of its
// matched topics, their labels and mute links, its feedback links, and the email's own links.
import { topicLabel } from '../match/label.ts';
import type { DigestPaperView, DigestView } from './digest-types.ts';
import { safeHref, tidy } from './render-format.ts';

export type Matched = Array<{ text: string; muteUrl: string }>;

export type FeedbackView = { more: string; less: string; follow: string | null; followName: string; canonical: boolean };

/**
 * The matched topic texts as one highlighter's input: sorted, so the same set shares one cache entry. A
 * like: topic is highlighted by its terms (an OR query of the example's distinctive words).
 */
export function topicKey(paper: DigestPaperView): string[] {
  return paper.matchedTopics.map((m) => m.highlight ?? m.text).sort();
}

/** The reader's feedback links of a paper (signed per subscriber and paper, so never in the shared bytes). */
export function feedbackView(paper: DigestPaperView): FeedbackView | null {
  const f = paper.feedback;
  if (f === undefined) return null;
  // Canonical links (FeedbackLinks.canonical) are what safeHref would give back: not checked again.
  const canonical = f.canonical === true;
  const follow = f.follow === undefined ? '#' : canonical ? f.follow.url : safeHref(f.follow.url);
  return {
    more: canonical ? f.more : safeHref(f.more),
    less: canonical ? f.less : safeHref(f.less),
    follow: follow === '#' ? null : follow,
    followName: f.follow === undefined ? '' : tidy(f.follow.name),
    canonical: f.canonical === true,
  };
}

/** The reader's matched topics as a card names them: each topic's label (match/label.ts), not its query. */
export function matchedView(paper: DigestPaperView): Matched {
  // A suggestion ranked in the list names its reason, which is no query (view.ts suggestedAs).
  return paper.matchedTopics.map((m) => ({ text: m.suggested === true ? tidy(m.text) : topicLabel(tidy(m.text)), muteUrl: safeHref(m.muteUrl) }));
}

export function safeLinks(links: DigestView['links']): DigestView['links'] {
  return {
    preferences: safeHref(links.preferences),
    unsubscribe: safeHref(links.unsubscribe),
    webView: safeHref(links.webView),
    home: safeHref(links.home),
  };
}
