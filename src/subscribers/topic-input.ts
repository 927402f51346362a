// The topics a person typed, as the subscription and preferences use cases take them: parsed and checked
// before anything is written, their queries created inside the caller's transaction, their like:
// examples looked up before any transaction (it may ask arXiv).
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { ensureExamples } from '../match/like/like.ts';
import type { LikeLookups } from '../match/like/lookups.ts';
import { ensureQuery } from '../match/matcher.ts';
import { parseTopic, parseTopics, type ParsedTopic } from '../match/parse.ts';
import type * as repo from './records/repo.ts';

export interface CheckedTopic {
  text: string;
  parsed: ParsedTopic;
  muted: boolean | undefined;
}

export type TopicItem = string | { text: string; muted?: boolean };

export interface TopicInputDeps {
  db: Db;
  clock: Clock;
  /** Looks up like: examples that are not in the database; unset: looked up here and now. */
  likeLookups?: LikeLookups | undefined;
}

/**
 * Parses every topic once (writes nothing); throws TOPIC_INVALID naming the topic by its place in the
 * list. Blank entries are skipped; of two topics with the same query the first is kept.
 */
export function checkTopics(items: TopicItem[]): CheckedTopic[] {
  const texts = items.map((t) => (typeof t === 'string' ? t : t.text));
  return parseTopics(texts).map((p) => {
    const item = items[p.index];
    return { text: p.text, parsed: p, muted: typeof item === 'object' ? item.muted : undefined };
  });
}

/** Creates the distinct queries (inside the caller's transaction). */
export function desiredTopics(db: Db, checked: CheckedTopic[]): repo.DesiredTopic[] {
  return checked.map((c) => ({
    text: c.text,
    queryId: ensureQuery(db, c.parsed),
    ...(c.muted === undefined ? {} : { muted: c.muted }),
  }));
}

/** The like: example ids these topics name (unparseable topics are left for checkTopics to report). */
export function likeExampleIds(items: Array<string | { text: string }> | undefined): string[] {
  const ids = new Set<string>();
  for (const item of items ?? []) {
    const text = typeof item === 'string' ? item : item.text;
    try {
      for (const id of parseTopic(text).like ?? []) ids.add(id);
    } catch {
      continue;
    }
  }
  return [...ids];
}

/**
 * Looks up the like: examples of these topics that the database lacks (before any transaction: it
 * may ask arXiv). Unparseable topics are left for checkTopics to report.
 */
export async function prepareExamples(deps: TopicInputDeps, items: Array<string | { text: string }> | undefined): Promise<void> {
  const ids = likeExampleIds(items);
  if (ids.length === 0) return;
  if (deps.likeLookups) await deps.likeLookups.ensure(ids);
  else await ensureExamples(deps.db, ids, undefined, deps.clock.now());
}
