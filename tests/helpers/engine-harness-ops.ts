// What a reader story does to a web harness's store between its emails, on either engine: a batch
// ingested, `digest run`'s tick in this process, a subscriber's digests with the papers each lists (a
// reference row's query lists merged as the loader merges them), retention's prune. On SQLite the app's
// file; on PostgreSQL the harness's schema, with PostgreSQL's own ingest, tick, link reader and prune.
// Seeded papers and readers as seed.ts writes them, on either engine.
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { readLinkedDigest } from '../../src/ledger/postgres/link-row.ts';
import { pruneLedgerPg } from '../../src/ledger/postgres/retention.ts';
import { pruneLedger } from '../../src/ledger/retention.ts';
import type { PipelineReport } from '../../src/pipeline.ts';
import type { SubscribeInput } from '../../src/subscribers/types.ts';
import type { IncomingBatch } from '../../src/types.ts';
import { addReadersPg, asIncoming } from './engine-run.ts';
import { runTick } from './engine-tick.ts';
import { rowItems, seedBatch, seedSubscribers, type SeedPaper, type SeedSubscriber } from './seed.ts';
import type { WebHarness } from './web-harness.ts';

/** A batch into the engine's store at the harness's clock. */
export async function ingestOn(h: WebHarness, batch: IncomingBatch): Promise<void> {
  if (h.pgPool) await ingestBatchPg(h.pgPool, batch, h.clock);
  else ingestBatch(h.core.db, batch, h.clock);
}

/** One `digest run` tick in this process on the engine's store. */
export function tickOn(h: WebHarness, mode: 'now' | 'due' = 'now'): Promise<PipelineReport> {
  return runTick(h.core, { pool: h.pgPool, pg: h.pg }, mode);
}

/** A confirmed subscriber through the door the web serves (the engine's store; it looks up like: examples itself). */
export async function subscribeOn(h: WebHarness, input: SubscribeInput): Promise<void> {
  await h.door.subscribe(input, { confirmed: true });
}

/** A subscriber's id and token salt in the engine's store (what tokens are signed with). */
export async function subjectOn(h: WebHarness, email: string): Promise<{ id: number; tokenSalt: string }> {
  const s = await h.sql.get<{ id: number | string; tokenSalt: string }>('SELECT id, token_salt AS "tokenSalt" FROM subscribers WHERE email = ?', email);
  if (!s) throw new Error(`no subscriber ${email}`);
  return { id: Number(s.id), tokenSalt: s.tokenSalt };
}

/** A subscriber's digests, oldest first, with the papers each listed ([] once retention pruned the list). */
export async function digestsOn(h: WebHarness, email: string): Promise<Array<{ id: number; papers: number[] }>> {
  type Row = { id: number | string; items: Buffer | null; from_paper: number; to_paper: number; topic_ids: string };
  const rows = await h.sql.all<Row>(
    `SELECT d.id, d.items, d.from_paper, d.to_paper, d.topic_ids FROM digests d JOIN subscribers s ON s.id = d.subscriber_id
     WHERE s.email = ? ORDER BY d.id`,
    email,
  );
  const out: Array<{ id: number; papers: number[] }> = [];
  for (const r of rows) {
    const id = Number(r.id);
    if (!h.pgPool) out.push({ id, papers: rowItems(r, h.core.db).map((i) => i.paperId) });
    else out.push({ id, papers: (await readLinkedDigest(h.pgPool, id))?.papers ?? [] });
  }
  return out;
}

/** Retention's prune at `now` (DIGEST_RETENTION_DAYS = `days`); returns the rows whose list was removed. */
export function pruneOn(h: WebHarness, now: Date, days: number): Promise<number> {
  if (h.pgPool) return pruneLedgerPg(h.pgPool, now, days);
  return pruneLedger(h.core.db, { now: () => now }, days);
}

/** seed.ts seedBatch into the engine's store, arrived at `ingestedAt` (on PostgreSQL through its ingest). */
export async function seedBatchOn(h: WebHarness, date: string, papers: SeedPaper[], source: string, ingestedAt: string): Promise<void> {
  if (!h.pgPool) seedBatch(h.core.db, date, papers, source, ingestedAt);
  else await ingestBatchPg(h.pgPool, { source, date, papers: asIncoming(date, papers) }, { now: () => new Date(ingestedAt) });
}

/** seed.ts seedSubscribers into the engine's store (the same defaults); their ids, in input order. */
export async function seedReadersOn(h: WebHarness, readers: SeedSubscriber[]): Promise<Array<{ id: number; email: string }>> {
  if (!h.pgPool) return seedSubscribers(h.core.db, readers).map(({ id, email }) => ({ id, email }));
  await addReadersPg(h.pgPool, readers, h.clock.now().toISOString());
  return Promise.all(readers.map(async (r) => ({ id: (await subjectOn(h, r.email)).id, email: r.email })));
}
