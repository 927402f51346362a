// `digest copy --to postgres://…`: moves a SQLite deployment into an empty, migrated PostgreSQL schema
// in ONE transaction: every table (but the FTS5 index, rebuilt per run in memory), ids kept, identity
// sequences moved past them, then the rows of each table counted on both sides before the COMMIT. A
// mismatch rolls everything back. A non-empty target is refused: copy into a fresh schema, never merge.
// Run it with the service stopped (as `digest restore`): rows a sender is writing meanwhile would be missed.
import type { Database } from 'better-sqlite3';
import type pg from 'pg';
import { AppError } from '../../errors.ts';
import { listPgMigrations, migratePostgres } from './migrate.ts';
import { inTransaction } from './pool.ts';

/** Parents before children (foreign keys). */
export const COPIED_TABLES = [
  'settings', 'batches', 'papers', 'batch_papers', 'subscribers', 'queries', 'topics', 'query_matches',
  'digests', 'source_days', 'admin_sessions', 'like_examples', 'paper_terms', 'feedback', 'profile_terms',
  'digest_suggestions', 'mailgun_tokens', 'bounce_events', 'consent_events', 'resubscribe_requests',
  'notices', 'reader_models', 'query_lists',
] as const;

/**
 * Tables deliberately left behind: shared_limits holds rate-limit counters and feed-host spacings that
 * lapse within the hour (migration 016); the new deployment starts them afresh.
 */
export const NOT_COPIED_TABLES = ['shared_limits'] as const;

/**
 * PostgreSQL's own tables, with no SQLite twin: digest_editions (migration 017, each edition's id range)
 * is filled by its trigger as the digests are copied.
 */
export const PG_ONLY_TABLES = ['digest_editions'] as const;

/** Tables whose id is an identity column: their sequence moves past the copied ids. */
const IDENTITY_TABLES = ['batches', 'papers', 'subscribers', 'queries', 'topics', 'digests', 'bounce_events', 'consent_events', 'notices', 'query_lists'];

/** The opt-out history is copied as it is: its trigger must not add to it while bounce_events are copied. */
const SQL_TRIGGERS_OFF = `ALTER TABLE bounce_events DISABLE TRIGGER bounce_events_opt_out_history`;
const SQL_TRIGGERS_ON = `ALTER TABLE bounce_events ENABLE TRIGGER bounce_events_opt_out_history`;

/**
 * SQLite keeps no `failures_after` (PostgreSQL's migration 020): a copied failure streak is after the
 * subscriber's newest sent row, as that migration sets it for the rows it finds.
 */
const SQL_STREAKS_AFTER_NEWEST_SENT = `
  UPDATE subscribers s SET failures_after = (SELECT d.id FROM digests d WHERE d.subscriber_id = s.id AND d.status = 'sent'
                                             ORDER BY d.edition DESC LIMIT 1)
  WHERE s.hard_failures > 0`;

/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_PARAMS = 60_000;

export interface TableCount {
  table: string;
  sqlite: number;
  postgres: number;
}

export interface CopyReport {
  counts: TableCount[];
  ok: boolean;
}

/** Copies everything; returns the counts (ok false: rolled back, nothing copied). */
export async function copySqliteToPostgres(db: Database, pool: pg.Pool): Promise<CopyReport> {
  const sqliteVersion = db.pragma('user_version', { simple: true }) as number;
  const pgLatest = Math.max(...listPgMigrations().map((m) => m.version));
  if (sqliteVersion !== pgLatest) {
    throw new AppError('COPY_VERSION', `the SQLite database is at version ${sqliteVersion}, the PostgreSQL schema at ${pgLatest}: run digest migrate on the SQLite file first`);
  }
  await migratePostgres(pool);
  let report: CopyReport = { counts: [], ok: false };
  try {
    await inTransaction(pool, async (c) => {
      await refuseNonEmpty(c);
      await c.query(SQL_TRIGGERS_OFF);
      for (const table of COPIED_TABLES) await copyTable(db, c, table);
      await c.query(SQL_TRIGGERS_ON);
      await c.query(SQL_STREAKS_AFTER_NEWEST_SENT);
      for (const t of IDENTITY_TABLES) {
        await c.query(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), coalesce((SELECT max(id) FROM ${t}), 0) + 1, false)`);
      }
      report = await countBoth(db, c);
      if (!report.ok) throw new CountMismatch();
    });
  } catch (e) {
    if (!(e instanceof CountMismatch)) throw e;
  }
  return report;
}

class CountMismatch extends Error {}

async function refuseNonEmpty(c: pg.PoolClient): Promise<void> {
  for (const table of COPIED_TABLES) {
    const r = await c.query(`SELECT 1 FROM ${table} LIMIT 1`);
    if (r.rowCount) throw new AppError('COPY_TARGET_NOT_EMPTY', `the target already has rows in ${table}: copy into an empty schema`);
  }
}

async function copyTable(db: Database, c: pg.PoolClient, table: string): Promise<void> {
  const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
  const perInsert = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const insert = (n: number) =>
    `INSERT INTO ${table} (${columns.map((x) => `"${x}"`).join(', ')}) VALUES ` +
    Array.from({ length: n }, (_, i) => `(${columns.map((_, j) => `$${i * columns.length + j + 1}`).join(', ')})`).join(', ');
  let chunk: unknown[] = [];
  let rows = 0;
  for (const row of db.prepare(`SELECT * FROM "${table}"`).raw().iterate() as Iterable<unknown[]>) {
    chunk.push(...row);
    if (++rows === perInsert) {
      await c.query(insert(rows), chunk);
      chunk = [];
      rows = 0;
    }
  }
  if (rows > 0) await c.query(insert(rows), chunk);
}

async function countBoth(db: Database, c: pg.PoolClient): Promise<CopyReport> {
  const counts: TableCount[] = [];
  for (const table of COPIED_TABLES) {
    const sqlite = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    const postgres = Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n ?? -1);
    counts.push({ table, sqlite, postgres });
  }
  return { counts, ok: counts.every((x) => x.sqlite === x.postgres) };
}
