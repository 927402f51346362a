// The bounce store (store.ts) over PostgreSQL: the same rules as service.ts's recordBounce and
// mailgun-tokens.ts, in PostgreSQL's dialect, each report in one transaction. The subscriber's row is
// locked first (FOR UPDATE), so two reports for one reader (two soft bounces from two relays at once)
// count one after the other, as SQLite's BEGIN IMMEDIATE makes them. consent_events rows are written by
// migration 014's triggers (subscribers_opt_out_history, bounce_events_opt_out_history), as on SQLite.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { inTransaction } from '../../db/postgres/pool.ts';
import type { Logger } from '../../log.ts';
import type { TokenUse } from '../mailgun-tokens.ts';
import { logBounce, softWindowSince, type BounceDeps, type BounceInput, type BounceOutcome } from '../service.ts';
import type { BounceStore, MailgunTokenUse } from '../store.ts';

const SQL_DIGEST_NONCE = `SELECT verp_nonce AS nonce FROM digests WHERE id = $1`;

/** The subscriber a digest was for and their frequency; their row stays locked until the report is recorded. */
const SQL_DIGEST_SUBSCRIBER = `
  SELECT d.subscriber_id AS "subscriberId", s.frequency
  FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE d.id = $1
  FOR UPDATE OF s`;

const SQL_INSERT_EVENT = `
  INSERT INTO bounce_events (digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at)
  VALUES ($1, $2, $3, $4, $5, $6, 'none', $7)
  ON CONFLICT (digest_id, kind) DO NOTHING
  RETURNING id`;

const SQL_SOFT_SINCE = `
  SELECT count(*)::int AS n FROM bounce_events
  WHERE subscriber_id = $1 AND received_at >= $2 AND kind = 'soft'`;

/** Hard bounce (or soft at the limit): an address that already left stays as it is (records/repo.ts's SQL_SUPPRESS). */
const SQL_SUPPRESS = `
  UPDATE subscribers SET status = 'suppressed', suppressed_at = $2, opt_out_reason = NULL, opt_out_detail = NULL
  WHERE id = $1 AND status IN ('confirmed', 'pending')`;

/** Complaint: no reason given, so the trigger reads it from the complaint just recorded (as on SQLite). */
const SQL_UNSUBSCRIBE = `
  UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = $2, opt_out_reason = NULL, opt_out_detail = NULL
  WHERE id = $1 AND status <> 'unsubscribed'`;

const SQL_SET_OUTCOME = `UPDATE bounce_events SET outcome = $2 WHERE id = $1`;

const SQL_TOKEN_PRUNE = `DELETE FROM mailgun_tokens WHERE expires_at < $1`;
const SQL_TOKEN_REMEMBER = `
  INSERT INTO mailgun_tokens (token, body_sha256, expires_at) VALUES ($1, $2, $3)
  ON CONFLICT (token) DO NOTHING
  RETURNING token`;
const SQL_TOKEN_KNOWN = `SELECT body_sha256 AS hash FROM mailgun_tokens WHERE token = $1`;

export interface PgBounceDeps {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  config: BounceDeps['config'];
}

const changed = (r: pg.QueryResult) => (r.rowCount ?? 0) > 0;

/** recordBounce's body on one connection inside its transaction. */
async function recordOn(c: pg.PoolClient, deps: PgBounceDeps, input: BounceInput): Promise<BounceOutcome> {
  const at = deps.clock.now();
  const now = at.toISOString();
  const d = (await c.query<{ subscriberId: string; frequency: string }>(SQL_DIGEST_SUBSCRIBER, [input.digestId])).rows[0];
  if (!d) return 'unknown-digest';
  const subscriberId = Number(d.subscriberId);
  const detail = input.detail.slice(0, 500);
  const inserted = (await c.query<{ id: string }>(SQL_INSERT_EVENT, [input.digestId, subscriberId, input.kind, input.channel, input.status, detail, now])).rows[0];
  if (!inserted) return 'duplicate';
  let result: BounceOutcome = 'none';
  if (input.kind === 'hard') {
    if (changed(await c.query(SQL_SUPPRESS, [subscriberId, now]))) result = 'suppressed';
  } else if (input.kind === 'soft') {
    const n = (await c.query<{ n: number }>(SQL_SOFT_SINCE, [subscriberId, softWindowSince(deps.config, d.frequency, at)])).rows[0]!.n;
    result = n >= deps.config.SOFT_BOUNCES_TO_SUPPRESS && changed(await c.query(SQL_SUPPRESS, [subscriberId, now])) ? 'suppressed' : 'counted';
  } else if (input.kind === 'policy') {
    result = 'alerted';
  } else if (changed(await c.query(SQL_UNSUBSCRIBE, [subscriberId, now]))) {
    result = 'unsubscribed';
  }
  await c.query(SQL_SET_OUTCOME, [inserted.id, result]);
  return result;
}

/** mailgun-tokens.ts's useMailgunToken on one connection inside its transaction. */
async function useTokenOn(c: pg.PoolClient, use: MailgunTokenUse): Promise<TokenUse> {
  await c.query(SQL_TOKEN_PRUNE, [use.now.toISOString()]);
  if ((await c.query(SQL_TOKEN_REMEMBER, [use.token, use.hash, use.expiresAt.toISOString()])).rows[0]) return 'first';
  return (await c.query<{ hash: string }>(SQL_TOKEN_KNOWN, [use.token])).rows[0]?.hash === use.hash ? 'repeat' : 'replay';
}

export function postgresBounceStore(deps: PgBounceDeps): BounceStore {
  const { pool, logger } = deps;
  return {
    async nonceOf(digestId) {
      const row = (await pool.query<{ nonce: string | null }>(SQL_DIGEST_NONCE, [digestId])).rows[0];
      // bigint comes back as text: the nonce fits a double exactly (52 random bits and a sign, verp.ts).
      return row === undefined ? undefined : row.nonce === null ? null : Number(row.nonce);
    },
    async record(input) {
      const outcome = await inTransaction(pool, (c) => recordOn(c, deps, input));
      logBounce(logger, input, outcome);
      return outcome;
    },
    async recordWithToken(use, input) {
      const r = await inTransaction(pool, async (c) => {
        const u = await useTokenOn(c, use);
        return { use: u, outcome: u === 'first' && input ? await recordOn(c, deps, input) : null };
      });
      if (input && r.outcome) logBounce(logger, input, r.outcome);
      return r;
    },
  };
}
