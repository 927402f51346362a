// Every URL that goes into an email or a page, built from PUBLIC_URL and signed tokens.
import type { Clock } from './clock.ts';
import type { TokenSubject, Tokens } from './tokens.ts';

/** Confirmation links stay valid this long. */
export const CONFIRM_TTL_MS = 7 * 24 * 3600 * 1000;

export class Links {
  constructor(
    readonly base: string,
    private readonly tokens: Tokens,
    private readonly clock: Clock,
  ) {}

  home(): string {
    return `${this.base}/`;
  }
  confirm(s: TokenSubject): string {
    const exp = new Date(this.clock.now().getTime() + CONFIRM_TTL_MS);
    return `${this.base}/confirm/${this.tokens.sign(s, 'confirm', exp)}`;
  }
  preferences(s: TokenSubject): string {
    return this.manageOf(this.manageToken(s)).preferences;
  }
  /** Page with a button (GET) and the RFC 8058 one-click target (POST). */
  unsubscribe(s: TokenSubject): string {
    return this.manageOf(this.manageToken(s)).unsubscribe;
  }
  /** The subscriber's 'manage' token: preferences, unsubscribe and mute links all carry it. */
  manageToken(s: TokenSubject): string {
    return this.tokens.sign(s, 'manage');
  }
  /**
   * Both links of a 'manage' token the caller already holds (manageToken): a digest carries both and its
   * mute links, for one HMAC (~2.7 µs) in all.
   */
  manageOf(token: string): { preferences: string; unsubscribe: string } {
    return { preferences: `${this.base}/preferences/${token}`, unsubscribe: `${this.base}/unsubscribe/${token}` };
  }
  /**
   * One-click mute of one topic: the GET asks, the POST mutes. Decision: the link carries the subscriber's
   * 'manage' token and the topic id, not a token of its own (purpose mute:<topicId>, still accepted from
   * emails sent before). The manage token already edits every topic, so nothing is granted that the email's
   * footer did not; and a digest pays one signature for all its mute links instead of one per topic.
   * Measured: BENCHMARKS.md § Why the code is shaped this way, links.ts.
   */
  mute(s: TokenSubject, topicId: number): string {
    return this.muteOf(this.manageToken(s), topicId);
  }
  /** mute() for a manage token the caller already holds (manageToken). */
  muteOf(manageToken: string, topicId: number): string {
    return `${this.base}/mute/${manageToken}/${topicId}`;
  }
  /**
   * The digest's own link token (purpose view:<digestId>, for one subscriber and one digest): the token
   * of every feedback and follow link in it (its web view link has its own: webView()). Decision: one token per digest
   * instead of one per paper shown (purpose paper:<id>, still accepted from emails already sent): one
   * HMAC per digest instead of one per paper, which was ~5% of a sending thread's time. The feedback
   * service checks that the paper in the link is one of that digest's papers or suggestions.
   */
  digestToken(s: TokenSubject, digestId: number): string {
    return this.tokens.sign(s, `view:${digestId}`);
  }
  /**
   * The "view in browser" link: a token of its own (purpose read:<digestId>) that reads that digest and
   * does nothing else, so a reader can share the page. Decision: not the digest's feedback token, which
   * votes and follows authors for the reader; one more HMAC per digest (~3 µs).
   */
  webView(s: TokenSubject, digestId: number): string {
    return this.webViewOf(this.tokens.sign(s, `read:${digestId}`));
  }
  /** The web view link for a token the caller already holds (read:<digestId>, or view:<digestId> of older emails). */
  webViewOf(token: string): string {
    return `${this.base}/digests/${token}`;
  }
  /**
   * "More like this" / "less like this": GET shows a one-button page, POST records the vote. `token` is
   * the digest's token (digestToken).
   */
  feedback(token: string, paperId: number, direction: 'more' | 'less'): string {
    return `${this.base}/feedback/${token}/${paperId}/${direction}`;
  }
  /** Follow the paper's author at `authorIndex` (0-based): GET confirms, POST adds an author: topic. `token` as for feedback(). */
  follow(token: string, authorIndex: number, paperId: number): string {
    return `${this.base}/follow/${token}/${authorIndex}/${paperId}`;
  }
  /** feedback() and follow() of one digest token, for many papers (DigestLinks). */
  digestLinks(token: string): DigestLinks {
    return new DigestLinks(this.base, token);
  }
  /** The personal Atom feed of matched papers (last 30 days). */
  feed(s: TokenSubject): string {
    return `${this.base}/feed/${this.tokens.sign(s, 'feed')}`;
  }
}

/**
 * One digest's feedback and follow links, the same strings as Links.feedback() and Links.follow(token, 0, …).
 * Decision: the part before the paper id is joined and flattened once per digest, so a paper's link is two
 * joins instead of five (three links per paper shown: their joins were ~10% of the bytes a diverse digest
 * allocated). Measured: BENCHMARKS.md, the send path on diverse readers (second pass).
 */
export class DigestLinks {
  private readonly feedbackPrefix: string;
  private readonly followPrefix: string;
  constructor(base: string, token: string) {
    this.feedbackPrefix = flat(`${base}/feedback/${token}/`);
    this.followPrefix = flat(`${base}/follow/${token}/0/`);
  }
  more(paperId: number): string {
    return `${this.feedbackPrefix}${paperId}/more`;
  }
  less(paperId: number): string {
    return `${this.feedbackPrefix}${paperId}/less`;
  }
  /** Follow the paper's first author (Links.follow with authorIndex 0). */
  followFirst(paperId: number): string {
    return this.followPrefix + paperId;
  }
}

/** `s` as one flat string: V8 flattens a joined string in place on its first character read. */
function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}
