// The renderer's input and output for digests: a leaf module (render.ts, digest-email.ts and view.ts
// all use these; keeping them here keeps the imports acyclic).
import type { PaperInput } from './render-parts.ts';

export interface DigestPaperView extends PaperInput {
  /**
   * The subscriber's topics that matched, in order. `highlight`: the query whose words to mark (like:
   * topics). `suggested`: not a topic but a suggestion of the reader's model ranked in the list, `text`
   * its reason as shown. Read-only: the loader gives every paper with the same topics one shared list (view.ts).
   */
  matchedTopics: ReadonlyArray<Readonly<{ text: string; muteUrl: string; highlight?: string | undefined; suggested?: boolean | undefined }>>;
  /** Signed per subscriber and paper: "more/less like this", follow the first author. */
  feedback?: FeedbackLinks | undefined;
  /**
   * Every topic text that matched this paper in the run, whoever's (DigestLoader): the card cache builds
   * one entry per paper with all their highlights as slots, lit per reader (card-highlight.ts).
   */
  runTopics?: string[] | undefined;
  /** A suggestion's reason: the title of the paper the reader liked that it resembles most. */
  because?: string | undefined;
}

export interface FeedbackLinks {
  more: string;
  less: string;
  follow?: { url: string; name: string } | undefined;
  /**
   * The links were made by Links over a canonical PUBLIC_URL (DigestLoader checks it once): safeHref would
   * give them back unchanged and HTML escaping too, so the renderer does neither again (three links per
   * paper shown, ~0.2 µs each for each: 2.5% and 2% of a sending thread in a CPU profile).
   */
  canonical?: boolean;
}

export interface DigestView {
  email: string;
  /** YYYY-MM-DD */
  edition: string;
  /** Already in display order (the planner sorts). For an email, possibly only the first ones (paperCount). */
  papers: DigestPaperView[];
  /** All the digest's papers, when `papers` holds only the first ones (DigestLoader's LoadOptions.papers). */
  paperCount?: number | undefined;
  /** Then also every matched topic's text, in order of first appearance over all of them (for the subject). */
  topicTexts?: string[] | undefined;
  /**
   * Per topic (its text), how many of ALL the digest's papers matched it, in the reader's topic order: the
   * loader counts them as it walks the list (DigestLoader); without it they are counted from `papers`.
   */
  topicCounts?: Array<{ text: string; count: number }> | undefined;
  /** First and last batch day of the papers (metadata: "papers of 24–25 Nov"); never decides anything. */
  paperDays?: { first: string; last: string } | undefined;
  /** The paper list was pruned (DIGEST_RETENTION_DAYS): the web view says so instead of listing. */
  expired?: boolean | undefined;
  links: { preferences: string; unsubscribe: string; webView: string; home: string };
  /** The reader's own cap (preference "most papers per email"): the rest are behind the web link. */
  maxPapers?: number | null | undefined;
  /** Of the papers, how many are suggestions ranked in the list (the reader's model's; none: undefined). */
  suggestedInList?: number | undefined;
  /** "You may also like": at most three papers no topic matched that the reader's profile ranks high. */
  suggestions?: DigestPaperView[] | undefined;
  /**
   * "From authors you follow": the papers only a followed author brought (no other topic of the reader's
   * matched them), apart from the ranked list, which stays what it would be without the follow (view.ts).
   */
  followed?: DigestPaperView[] | undefined;
}

export interface RenderedEmail {
  subject: string;
  /** The HTML part (for a digest: decoded from `encoded` when first read; the send path never reads it). */
  readonly html: string;
  readonly text: string;
  /** How many papers the email lists, in full or compact (the rest are behind the web-view link). */
  shownPapers: number;
  /** Of those, how many in full (digests). */
  fullPapers?: number;
  /**
   * Size of the HTML part as a client reads it (digests): under the clipping cap. 7bit: non-ASCII as
   * references (so at least the UTF-8 size of `html`), each line break counted as one byte.
   */
  htmlBytes?: number;
  /**
   * Digest bodies as encoded bytes, ready for the MIME builder (mail/raw-message.ts): the text quoted-printable,
   * the HTML 7bit (src/render/encode/html-body.ts) or, when it could not be laid out so, quoted-printable.
   */
  encoded?: { html: Buffer[]; text: Buffer[]; htmlTransfer?: '7bit' | 'quoted-printable' };
  /**
   * Done with this email (sent, or failed): its scratch buffers go back to the renderer for the next one.
   * `encoded`, `html` and `text` must not be read afterwards (html/text throw unless read before).
   */
  release?(): void;
}
