// What a feedback or follow link means, on either engine (service.ts on SQLite, postgres/feedback.ts): which
// tokens it may carry, when the digest it names holds the paper, and the refusals a reader reads. Every
// refusal of a link is the same 403 as a forged one, so an answer never tells which check failed.
import { AppError } from '../errors.ts';
import { invalidLink, type LinkKind } from '../subscribers/records/link-tokens.ts';
import type { SubscriberRecord } from '../subscribers/records/repo.ts';
import { MAX_TOPICS, parseTopic } from '../match/parse.ts';
import type { Paper } from '../types.ts';

/** The tokens a feedback or follow link may carry: the digest's own, or an older email's per-paper one. */
export const FEEDBACK_KINDS = ['paper', 'view'] as const satisfies readonly LinkKind[];

export type LinkedPaper = Pick<Paper, 'id' | 'title' | 'url' | 'authors'>;

/**
 * An older email's token names its paper: a link edited to point at another paper is not valid. A
 * digest's token: true, the caller then checks the digest (listedInDigest).
 */
export function needsDigestCheck(kind: (typeof FEEDBACK_KINDS)[number], targetId: number | undefined, paperId: number): boolean {
  if (kind === 'view') return true;
  if (targetId !== paperId) throw invalidLink('paper');
  return false;
}

/** The digest a link names (undefined: no such row), as the check needs it. */
export interface DigestOfLink {
  subscriberId: number;
  /** Its papers (undefined once retention pruned its list). */
  papers: readonly number[] | undefined;
}

/**
 * The digest must be the subscriber's and list the paper: true when it does; false when the caller must
 * ask whether the digest suggested it (else the link is refused: notInDigest). A pruned list answers 410
 * with the way to the preferences page.
 */
export function listedInDigest(d: DigestOfLink | undefined, subscriber: SubscriberRecord, paperId: number, preferencesUrl: () => string): boolean {
  if (!d || d.subscriberId !== subscriber.id) throw invalidLink('paper');
  if (d.papers === undefined) {
    throw new AppError(
      'DIGEST_EXPIRED',
      'This digest is older than the retention period, so its list of papers was removed and its feedback links have expired. You can still tune your digest on your preferences page.',
      { action: { url: preferencesUrl(), label: 'Your preferences' } },
    );
  }
  return d.papers.includes(paperId);
}

/** A paper the digest neither listed nor suggested: the same 403 as a forged link. */
export function notInDigest(): AppError {
  return invalidLink('paper');
}

export function refuseUnsubscribed(subscriber: SubscriberRecord): void {
  if (subscriber.status === 'unsubscribed') {
    throw new AppError('UNSUBSCRIBED', 'You are unsubscribed, so there is no digest to tune. Subscribe again from the home page.');
  }
}

export function paperGone(): AppError {
  return new AppError('PAPER_GONE', 'This paper is no longer in the digest database.');
}

export function topicsFull(): AppError {
  return new AppError('TOPICS_FULL', `You already have ${MAX_TOPICS} topics, the most a digest can have; remove one on your preferences page first.`);
}

/** The author a follow link names, and the topic following them adds. */
export function authorTopic(paper: LinkedPaper, index: number): { name: string; text: string; key: string } {
  const name = paper.authors[index];
  if (name === undefined) throw invalidLink('paper');
  // A name becomes a phrase in an author: topic; quotes inside it could not be typed there either.
  const clean = name.replaceAll('"', '').trim();
  const text = `author:"${clean}"`;
  return { name: clean, text, key: parseTopic(text).fts };
}

/** Whether one of `topics` already means the same query as `key` (an author: topic followed before). */
export function hasTopic(topics: ReadonlyArray<{ text: string }>, key: string): boolean {
  return topics.some((t) => topicKey(t.text) === key);
}

function topicKey(text: string): string | null {
  try {
    return parseTopic(text).fts;
  } catch {
    return null;
  }
}
