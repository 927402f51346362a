// What a card's reader parts are filled with, made from a paper as the loader gives it: its matched topics
// and feedback links checked (safeHref) and tidied once, and the digest's own links (digest-email.ts,
// render.ts).
import type { DigestPaperView, DigestView, LinkPrefixes } from './digest-types.ts';
import { safeHref, tidy } from './render-format.ts';

/** A card's "Matched:" topics: each topic's text and its mute link. */
export type Matched = Array<{ text: string; muteUrl: string }>;

/** A card's feedback links as written. `prefixes`: what they start with (canonical links only, link-prefixes.ts). */
export type FeedbackView = {
  more: string;
  less: string;
  follow: string | null;
  followName: string;
  canonical: boolean;
  prefixes: LinkPrefixes | undefined;
};

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
  const check = f.canonical === true ? (url: string) => url : safeHref;
  const follow = f.follow === undefined ? '#' : check(f.follow.url);
  return {
    more: check(f.more),
    less: check(f.less),
    follow: follow === '#' ? null : follow,
    followName: f.follow === undefined ? '' : tidy(f.follow.name),
    canonical: f.canonical === true,
    // Only canonical links are written from their prefix's bytes (they are written as they are).
    prefixes: f.canonical === true ? f.prefixes : undefined,
  };
}

export function matchedView(paper: DigestPaperView): Matched {
  return paper.matchedTopics.map((m) => ({ text: tidy(m.text), muteUrl: safeHref(m.muteUrl) }));
}

export function safeLinks(links: DigestView['links']): DigestView['links'] {
  return {
    preferences: safeHref(links.preferences),
    unsubscribe: safeHref(links.unsubscribe),
    webView: safeHref(links.webView),
    home: safeHref(links.home),
  };
}
