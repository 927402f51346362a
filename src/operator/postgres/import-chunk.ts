// One chunk of `digest import` on PostgreSQL, set-based: a few statements per chunk whatever its size. The
// chunk's addresses are locked, their rows and opt-out histories read in one statement each, every row is
// decided in JS by consent-rules.ts importRowStep (the one rule, as SQLite's import-write.ts writeRow), and
// the new subscribers, the topics and the confirmations are written with unnest.
import type pg from 'pg';
import { activeOptOutsOf } from '../../consent/postgres.ts';
import { importRowStep, keptOptedOutNote } from '../../subscribers/consent-rules.ts';
import { stagedTopics } from '../../subscribers/import-examples.ts';
import type { StagedRow } from '../../subscribers/import-types.ts';
import type { ChunkOutcome } from '../../subscribers/import-write.ts';
import * as records from '../../subscribers/records/postgres.ts';
import type { SubscriberPrefs } from '../../subscribers/records/repo.ts';
import type { SubscriberStatus } from '../../types.ts';
import { newSalt } from '../../tokens.ts';

// Every address of the chunk, in one order (two imports at once wait rather than deadlock), as the door's
// writes take it (subscribers/postgres/common.ts forAddress).
const SQL_LOCK_ADDRESSES = `
  SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended(lower(e), 0) AS k FROM unnest($1::text[]) e ORDER BY 1) x`;

// Their rows, found one index probe per address: the ORDER BY keeps the planner from flattening the
// subquery into a hash join over the whole table (it chose one below ~50k subscribers).
const SQL_EXISTING = `
  SELECT u.e AS key, s.id FROM unnest($1::text[]) AS u (e),
    LATERAL (SELECT id FROM subscribers WHERE lower(email) = lower(u.e) ORDER BY id) s`;
// Then locked in id order and their status read under the lock: a one-click unsubscribe or a bounce (which
// do not take the address lock) either committed before (its status is read here) or waits for the commit.
const SQL_LOCK_EXISTING = `SELECT id, status FROM subscribers WHERE id = ANY ($1::bigint[]) ORDER BY id FOR UPDATE`;

// New addresses start pending (records/postgres.ts SQL_INSERT_SUBSCRIBER), in file order.
const SQL_INSERT_SUBSCRIBERS = `
  INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, frequency, created_at)
  SELECT u.e, 'pending', u.salt, $3, $4, $5, $6
  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u (e, salt, n) ORDER BY u.n
  RETURNING id, email`;

// records/postgres.ts replaceTopics for the chunk's updated subscribers: the topics no longer asked for go;
// then every wanted topic is inserted, or updated in place (its id and mute state kept: digests and mute
// links name topic ids).
const SQL_DELETE_UNWANTED_TOPICS = `
  DELETE FROM topics t
  WHERE t.subscriber_id = ANY ($1::bigint[])
    AND (t.subscriber_id, t.query_id) NOT IN (SELECT d.sid, d.qid FROM unnest($2::bigint[], $3::bigint[]) AS d (sid, qid))`;
const SQL_UPSERT_TOPICS = `
  INSERT INTO topics (subscriber_id, query_id, text, muted, position)
  SELECT d.sid, d.qid, d.text, 0, d.pos FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[]) AS d (sid, qid, text, pos)
  ORDER BY d.sid, d.pos
  ON CONFLICT (subscriber_id, query_id) DO UPDATE SET text = excluded.text, position = excluded.position`;

export interface ChunkContext {
  now: string;
  prefs: SubscriberPrefs;
  /** Query id by key (ParsedTopic.fts): every topic of the chunk is in it (import.ts saves them first). */
  queryIds: Map<string, number>;
}


/** The chunk's rows in the caller's transaction: created, updated or kept opted out, counted. */
export async function writeChunkPg(c: pg.PoolClient, rows: readonly StagedRow[], ctx: ChunkContext): Promise<ChunkOutcome> {
  const emails = rows.map((r) => r.email);
  await c.query(SQL_LOCK_ADDRESSES, [emails]);
  const found = (await c.query<{ key: string; id: number }>(SQL_EXISTING, [emails])).rows;
  const locked = new Map(
    (await c.query<{ id: number; status: SubscriberStatus }>(SQL_LOCK_EXISTING, [found.map((r) => r.id)])).rows.map((r) => [r.id, r]),
  );
  // A row deleted meanwhile is gone from `locked`: the row is decided as a new address, by its history.
  const existing = new Map(found.flatMap((r) => (locked.has(r.id) ? [[r.key, locked.get(r.id)!] as const] : [])));
  const optOuts = await activeOptOutsOf(c, emails);

  const out: ChunkOutcome = { created: 0, updated: 0, keptOptedOut: 0, notes: [] };
  const created: StagedRow[] = [];
  const updated: Array<{ row: StagedRow; id: number }> = [];
  const confirmEmails = new Set<string>();
  const confirmIds: number[] = [];
  for (const row of rows) {
    const known = existing.get(row.email);
    const active = optOuts.get(row.email) ?? [];
    const step = importRowStep(known, active, row.confirmed === 1);
    if (step.keptOptedOut) {
      out.keptOptedOut++;
      out.notes.push({ line: row.line, message: keptOptedOutNote(row.email, known, active) });
    }
    if (step.write === 'none') continue;
    if (known) updated.push({ row, id: known.id });
    else created.push(row);
    if (step.confirm) {
      if (known) confirmIds.push(known.id);
      else confirmEmails.add(row.email);
    }
  }

  const ids = new Map(updated.map((u) => [u.row.email, u.id]));
  if (created.length > 0) {
    const { prefs, now } = ctx;
    const inserted = await c.query<{ id: number; email: string }>(SQL_INSERT_SUBSCRIBERS, [
      created.map((r) => r.email),
      created.map(() => newSalt()),
      prefs.timezone,
      prefs.deliveryHour,
      prefs.frequency,
      now,
    ]);
    for (const r of inserted.rows) {
      ids.set(r.email, r.id);
      if (confirmEmails.has(r.email)) confirmIds.push(r.id);
    }
  }
  await writeTopics(c, [...created, ...updated.map((u) => u.row)], ids, updated.map((u) => u.id), ctx.queryIds);
  await records.markConfirmedSet(c, confirmIds, ctx.now);
  out.created = created.length;
  out.updated = updated.length;
  return out;
}

/** Each written row's topics as the file gives them (position in file order, one per query). */
async function writeTopics(c: pg.PoolClient, rows: StagedRow[], ids: Map<string, number>, updatedIds: number[], queryIds: Map<string, number>): Promise<void> {
  const sid: number[] = [];
  const qid: number[] = [];
  const text: string[] = [];
  const pos: number[] = [];
  for (const row of rows) {
    const id = ids.get(row.email)!;
    let position = 0;
    // The staged topics hold one entry per query already (import.ts validateRow).
    for (const [t, fts] of stagedTopics(row)) {
      sid.push(id);
      qid.push(queryIds.get(fts)!);
      text.push(t);
      pos.push(position++);
    }
  }
  if (updatedIds.length > 0) await c.query(SQL_DELETE_UNWANTED_TOPICS, [updatedIds, sid, qid]);
  if (sid.length > 0) await c.query(SQL_UPSERT_TOPICS, [sid, qid, text, pos]);
}
