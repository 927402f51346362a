// `digest preview <email>` on PostgreSQL: the digest that reader's next slot would hold, from PostgreSQL's
// rows, rendered but not sent, nothing kept. As on SQLite (render/preview.ts): match, plan that one reader
// (as if confirmed), load the open ledger row, render it; here inside one transaction on one connection
// that is rolled back, the row loaded through the worker's in-memory mirror (send/postgres/batch-mirror.ts)
// reading on that same connection, so it sees the rows the rolled-back plan wrote.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { AppError } from '../../errors.ts';
import type { Links } from '../../links.ts';
import { matchPendingPg } from '../../match/postgres/match.ts';
import { planDigestsPg } from '../../plan/postgres/plan.ts';
import { previewSlotClock } from '../../render/preview.ts';
import type { Renderer, RenderedEmail } from '../../render/render.ts';
import { BatchMirror } from '../../send/postgres/batch-mirror.ts';
import { findSubscriberByEmail } from '../../subscribers/records/postgres.ts';

const SQL_AS_IF_CONFIRMED = `UPDATE subscribers SET status = 'confirmed' WHERE id = $1`;
const SQL_OPEN_DIGEST = `
  SELECT id FROM digests WHERE subscriber_id = $1 AND status IN ('planned', 'retry') ORDER BY id DESC LIMIT 1`;

/**
 * A pool of one connection inside an open transaction: what the matcher, the planner and the mirror take
 * (a pg.Pool), each of their transactions a savepoint of the outer one, so rolling that back undoes them all.
 * Statements queue one after another (the mirror asks several at once; one connection runs one at a time).
 */
function poolInside(c: pg.PoolClient): pg.Pool {
  let queue: Promise<unknown> = Promise.resolve();
  const one = (text: string, values?: unknown) => {
    const next = queue.then(() => c.query(text, values as unknown[]));
    queue = next.catch(() => {});
    return next;
  };
  let n = 0;
  const nested = {
    async query(text: unknown, values?: unknown) {
      const sql = typeof text === 'string' ? text.trim().toUpperCase() : '';
      if (sql === 'BEGIN') return one(`SAVEPOINT preview_${++n}`);
      if (sql === 'COMMIT') return one(`RELEASE SAVEPOINT preview_${n--}`);
      if (sql === 'ROLLBACK') return one(`ROLLBACK TO SAVEPOINT preview_${n}`).then(() => one(`RELEASE SAVEPOINT preview_${n--}`));
      return one(text as string, values);
    },
    release() {},
  };
  return { query: one, connect: async () => nested } as unknown as pg.Pool;
}

export interface PostgresPreviewDeps {
  pool: pg.Pool;
  clock: Clock;
  links: Links;
  renderer: Renderer;
}

/** The digest `email` would get at its next slot; undefined when nothing matches. Writes nothing. */
export async function previewDigestPg(deps: PostgresPreviewDeps, email: string): Promise<RenderedEmail | undefined> {
  const { clock, links, renderer } = deps;
  const c = await deps.pool.connect();
  try {
    await c.query('BEGIN');
    const subscriber = await findSubscriberByEmail(c, email);
    if (!subscriber) throw new AppError('NOT_FOUND', `no subscriber with address ${email}`);
    const pool = poolInside(c);
    await c.query(SQL_AS_IF_CONFIRMED, [subscriber.id]);
    await matchPendingPg(pool);
    // No planning lock: this plan is rolled back; the ledger's unique key keeps a real planner's row apart.
    await planDigestsPg(pool, { clock: previewSlotClock(subscriber, clock), mode: 'now', onlySubscriber: subscriber.id, lock: false });
    const open = (await c.query<{ id: number }>(SQL_OPEN_DIGEST, [subscriber.id])).rows[0];
    if (!open) return undefined;
    const mirror = new BatchMirror(pool, links);
    try {
      await mirror.prepare([open.id]);
      const view = mirror.take(open.id, undefined)?.view;
      return view ? renderer.digest(view) : undefined;
    } finally {
      mirror.close();
    }
  } finally {
    await c.query('ROLLBACK').catch(() => {});
    c.release();
  }
}
