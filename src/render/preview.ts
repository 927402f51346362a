// `digest preview <email>`: the digest that would be sent to one subscriber now, rendered but not
// sent. Matching and planning run inside a savepoint that is rolled back, so nothing is written.
import { localTime, utcDate, type Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { AppError } from '../errors.ts';
import type { Links } from '../links.ts';
import { findSubscriberByEmail, markConfirmedForPreview } from '../subscribers/records/repo.ts';
import { matchPending } from '../match/matcher.ts';
import { planDigests } from '../plan/planner.ts';
import type { RenderedEmail, Renderer } from './render.ts';
import { loadDigestView } from './view.ts';

const DAY_MS = 86_400_000;

/** The subscriber-local date of an instant (UTC when the zone is unknown, as the planner does). */
function localDate(at: Date, timezone: string): string {
  try {
    return localTime(at, timezone).date;
  } catch {
    return utcDate(at);
  }
}

/** The clock a preview plans at: now, or a day on when today's slot has already run (either engine). */
export function previewSlotClock(subscriber: { lastSlot: string | null; timezone: string }, clock: Clock): Clock {
  const todayRan = subscriber.lastSlot !== null && subscriber.lastSlot >= localDate(clock.now(), subscriber.timezone);
  return todayRan ? { now: () => new Date(clock.now().getTime() + DAY_MS) } : clock;
}

/** Open ledger rows (planned, or waiting to retry) are what a run would send first. */
const SQL_OPEN_DIGEST = `
  SELECT id FROM digests
  WHERE subscriber_id = ? AND status IN ('planned', 'retry')
  ORDER BY id DESC LIMIT 1`;

export async function previewDigest(app: { db: Db; clock: Clock; links: Links; renderer: Renderer }, email: string): Promise<RenderedEmail | undefined> {
  const { db, clock, links, renderer } = app;
  const subscriber = findSubscriberByEmail(db, email);
  if (!subscriber) throw new AppError('NOT_FOUND', `no subscriber with address ${email}`);
  db.exec('SAVEPOINT preview');
  try {
    // A subscriber who is not confirmed yet is previewed as if they were. "What would be sent next" is
    // everything matched since their last delivered digest, planned for today's slot, or for tomorrow's
    // when today's has already run (a slot runs once: what arrived after it waits for the next one).
    markConfirmedForPreview(db, subscriber.id);
    matchPending(db);
    const at = previewSlotClock(subscriber, clock);
    // No yielding: the savepoint is open on this connection, nothing else may run inside it.
    await planDigests(db, { clock: at, mode: 'now', onlySubscriber: subscriber.id, yieldBetweenChunks: false });
    const open = statement(db, SQL_OPEN_DIGEST).get(subscriber.id) as { id: number } | undefined;
    if (!open) return undefined;
    const view = loadDigestView(db, open.id, links);
    return view ? renderer.digest(view) : undefined;
  } finally {
    db.exec('ROLLBACK TO preview; RELEASE preview');
  }
}
