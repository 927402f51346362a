// Configured paper sources (SOURCES=hf,arxiv:cs.LG+cs.CL): parsing the setting, polling every missing
// day on each tick, and the per-source summary for `digest sources`.
//
// Each day of each source becomes one batch. A day with nothing yet is recorded `empty` and asked again
// on later ticks; a day ingested is not asked again once it is final (Hugging Face keeps adding papers
// to a day while it lasts, so a day ingested early is fetched again until it has settled). A fault
// (timeout, 5xx after retries, malformed or partial data) ingests nothing for that day, is logged, and
// is recorded in source_days as `error` with the reason; the other days and sources go on.
import { utcDate, type Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { AppError, errorMessage } from '../errors.ts';
import type { Logger } from '../log.ts';
import { HostSpacer, type FetchOptions, type SharedSpacing } from './fetch.ts';
import { ingestBatch, ingestCounts, type IngestResult } from './ingest.ts';
import type { IncomingBatch } from '../types.ts';
import { failedDay, sourceErrors, sourceSummary, sqliteSourceStore, type SourceDay, type SourceStore } from './source-days.ts';
import type { AnySourceKind, DayFetch } from './source-kinds/kind.ts';
import { SOURCE_KINDS, sourceKindList, type SourceSettings } from './source-kinds/registry.ts';
import type { SourceSpec } from './source-spec.ts';

/** An arXiv category or archive: cs.LG, hep-th, astro-ph.CO, math. */
const CATEGORY = /^[a-z][a-z-]*(?:\.[A-Za-z][A-Za-z-]*)?$/;
export type { SourceSpec } from './source-spec.ts';

function badEntry(i: number, entry: string, why: string): AppError {
  return new AppError('CONFIG_INVALID', `Invalid configuration: SOURCES entry ${i + 1} (${JSON.stringify(entry)}): ${why}`);
}

/**
 * `hf,arxiv:cs.LG+cs.CL` -> specs, one per entry, of the kinds in source-kinds/registry.ts. Empty = no
 * sources. A bad entry throws CONFIG_INVALID naming it.
 */
export function parseSources(spec: string, kinds: readonly AnySourceKind[] = SOURCE_KINDS): SourceSpec[] {
  if (spec.trim() === '') return [];
  const specs: SourceSpec[] = [];
  spec.split(',').forEach((raw, i) => {
    const entry = raw.trim();
    if (entry === '') throw badEntry(i, entry, 'empty: separate sources with single commas, e.g. hf,arxiv:cs.LG');
    const colon = entry.indexOf(':');
    const kind = (colon < 0 ? entry : entry.slice(0, colon)).toLowerCase();
    const rest = colon < 0 ? '' : entry.slice(colon + 1).trim();
    const def = kinds.find((k) => k.name === kind);
    if (!def) throw badEntry(i, entry, `unknown source "${kind}"; known: ${sourceKindList(kinds)}`);
    let categories: string[] = [];
    if (!def.categories) {
      if (rest !== '') throw badEntry(i, entry, `${kind} takes no categories`);
    } else {
      if (rest === '') throw badEntry(i, entry, `needs categories, e.g. ${kind}:cs.LG+cs.CL`);
      categories = rest.split('+').map((c) => c.trim());
      const bad = categories.find((c) => !CATEGORY.test(c));
      if (bad !== undefined) throw badEntry(i, entry, `${JSON.stringify(bad)} is not an arXiv category (e.g. cs.LG, hep-th)`);
      categories = [...new Set(categories)];
    }
    const name = def.categories ? `${kind}:${categories.join('+')}` : kind;
    if (specs.some((s) => s.name === name)) throw badEntry(i, entry, `${name} is listed twice`);
    specs.push({ name, kind, categories });
  });
  return specs;
}

/**
 * Spaces requests to the hosts every kind asks spacing for (arXiv's: ARXIV_MIN_INTERVAL_MS); with `shared`,
 * for every process on that store together.
 */
export function sourceSpacer(config: SourceSettings, shared?: SharedSpacing): HostSpacer {
  const table: Record<string, number> = {};
  for (const kind of SOURCE_KINDS) Object.assign(table, kind.spacing?.(config));
  return HostSpacer.fromTable(table, shared);
}

export type PollStatus = 'ingested' | 'unchanged' | 'empty' | 'not-yet' | 'error';

/** One source x day of one poll. */
export interface PollReport {
  source: string;
  day: string;
  status: PollStatus;
  /** Why (error, not-yet, empty) or what (ingested: counts). */
  detail?: string;
  batchId?: number;
  papers?: number;
  newPapers?: number;
}

export interface SourcePollerDeps {
  /** The SQLite store; or, with `store` and `ingest`, any other (PostgreSQL: `digest plan --fetch`). */
  db?: Db;
  store?: SourceStore;
  ingest?: (batch: IncomingBatch) => Promise<IngestResult>;
  config: SourceSettings;
  clock: Clock;
  logger: Logger;
  /** Another fetch (tests use the real one against a local server). */
  fetch?: typeof fetch;
  /** Per-host spacing; default: what each kind asks for (sourceSpacer). */
  spacer?: HostSpacer;
  /** First retry delay in ms (default 1000). */
  backoffMs?: number;
  /** The kinds SOURCES may name (default: source-kinds/registry.ts). */
  kinds?: readonly AnySourceKind[];
}

const DAY = 24 * 3_600_000;

function addDays(day: string, n: number): string {
  return utcDate(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY));
}

/** Whether a day in the look-back window is to be asked for now, given what was recorded for it. */
export function needsFetch(row: SourceDay | undefined, day: string, now: Date, settleMs: number, refreshMs: number): boolean {
  if (!row || row.status === 'error') return true;
  const fetchedAt = Date.parse(row.fetchedAt);
  if (row.status === 'ingested' && fetchedAt >= Date.parse(`${day}T00:00:00Z`) + DAY + settleMs) return false;
  return now.getTime() - fetchedAt >= refreshMs;
}

/**
 * Polls the configured sources. A class so each step (poll, one source, one day, its ingest) is a
 * named method sharing the deps, kinds and per-poll unreachable-host map.
 */
export class SourcePoller {
  readonly specs: SourceSpec[];
  private readonly kinds: readonly AnySourceKind[];
  private readonly spacer: HostSpacer;
  // Hosts found unreachable in the current poll (see FetchOptions.unreachable); a new map per poll.
  private unreachable = new Map<string, AppError>();

  private readonly store: SourceStore;
  private readonly ingest: (batch: IncomingBatch) => IngestResult | Promise<IngestResult>;

  constructor(private readonly deps: SourcePollerDeps) {
    const db = deps.db;
    if (deps.store && deps.ingest) {
      this.store = deps.store;
      this.ingest = deps.ingest;
    } else if (db) {
      this.store = sqliteSourceStore(db);
      this.ingest = (batch) => ingestBatch(db, batch, deps.clock);
    } else throw new Error('SourcePoller: a db, or a store and an ingest');
    this.kinds = deps.kinds ?? SOURCE_KINDS;
    this.specs = parseSources(deps.config.SOURCES, this.kinds);
    this.spacer = deps.spacer ?? sourceSpacer(deps.config);
  }

  /** Asks every configured source for every day it is missing; one report per source x day asked. */
  async poll(signal?: AbortSignal): Promise<PollReport[]> {
    const { clock, logger } = this.deps;
    const reports: PollReport[] = [];
    this.unreachable = new Map();
    // One source after another: paper ids then grow in a stable order (sources as configured, days oldest first).
    for (const spec of this.specs) {
      if (signal?.aborted) break;
      try {
        reports.push(...(await this.pollSource(spec, signal)));
      } catch (e) {
        if (e instanceof AppError && e.code === 'FETCH_ABORTED') break;
        // A bug or a database fault in one source must not stop the others.
        const reason = errorMessage(e);
        logger.error({ source: spec.name, err: reason }, 'source poll failed');
        reports.push({ source: spec.name, day: utcDate(clock.now()), status: 'error', detail: reason });
      }
    }
    return reports;
  }

  private fetchOptions(signal?: AbortSignal): FetchOptions {
    const { config, logger } = this.deps;
    return {
      unreachable: this.unreachable,
      timeoutMs: config.FETCH_TIMEOUT_MS,
      retries: config.FETCH_RETRIES,
      logger,
      signal,
      spacer: this.spacer,
      fetch: this.deps.fetch,
      backoffMs: this.deps.backoffMs,
    };
  }

  private async pollSource(spec: SourceSpec, signal?: AbortSignal): Promise<PollReport[]> {
    const { config, clock } = this.deps;
    const kind = this.kinds.find((k) => k.name === spec.kind);
    if (!kind) throw new AppError('CONFIG_INVALID', `unknown source kind ${spec.kind}`);
    const today = utcDate(clock.now());
    const ctx = { spec, today, settings: config, fetch: this.fetchOptions(signal) };
    const schedule = kind.schedule;
    if (schedule.kind === 'latest') return [await this.askDay(spec, today, () => kind.fetchDay(ctx, today))];
    const reports: PollReport[] = [];
    for (const day of await this.daysToAsk(spec, today, addDays(today, schedule.lastDay), schedule.settleMs, schedule.refreshMs)) {
      reports.push(await this.askDay(spec, day, () => kind.fetchDay(ctx, day)));
    }
    return reports;
  }

  /** The look-back window of a dated source, oldest first, without the days already final. */
  private async daysToAsk(spec: SourceSpec, today: string, lastDay: string, settleMs: number, refreshMs: number): Promise<string[]> {
    const first = addDays(today, -this.deps.config.SOURCE_LOOKBACK_DAYS);
    const known = await this.store.daysInWindow(spec.name, first, lastDay);
    const now = this.deps.clock.now();
    const days: string[] = [];
    for (let d = first; d <= lastDay; d = addDays(d, 1)) if (needsFetch(known.get(d), d, now, settleMs, refreshMs)) days.push(d);
    return days;
  }

  /** Fetches one day (or the latest listing), ingests it, records and reports the outcome. */
  private async askDay(spec: SourceSpec, day: string, fetchDay: () => Promise<DayFetch>): Promise<PollReport> {
    const { clock } = this.deps;
    const store = this.store;
    const log = this.deps.logger.child({ source: spec.name });
    let got: DayFetch;
    try {
      got = await fetchDay();
    } catch (e) {
      if (e instanceof AppError && e.code === 'FETCH_ABORTED') throw e;
      const reason = errorMessage(e);
      const known = await store.sourceDay(spec.name, day);
      // A day already ingested keeps its papers and status; the failed refresh is only reported.
      if (known?.status !== 'ingested') await store.recordDay({ source: spec.name, day, status: 'error', lastError: reason, now: clock.now() });
      log.warn({ day, err: reason, code: e instanceof AppError ? e.code : undefined }, 'source day failed; nothing ingested');
      return { source: spec.name, day, status: 'error', detail: reason };
    }
    const latestOnly = this.kinds.find((k) => k.name === spec.kind)?.schedule.kind === 'latest';
    if (latestOnly) await store.clearErrors(spec.name); // a stream: a good fetch resolves earlier failures
    const now = clock.now();
    const known = await store.sourceDay(spec.name, got.day);
    if (got.outcome !== 'papers') {
      if (known?.status !== 'ingested') await store.recordDay({ source: spec.name, day: got.day, status: 'empty', now });
      log.info({ day: got.day, outcome: got.outcome, detail: got.detail }, 'nothing yet for this day');
      return { source: spec.name, day: got.day, status: got.outcome, detail: got.detail };
    }
    if (latestOnly && known?.status === 'ingested') {
      return { source: spec.name, day: got.day, status: 'unchanged', detail: 'announcement already ingested' };
    }
    return this.ingestDay(spec, got, known, now, log);
  }

  /** Ingests the papers of a fetched day; an ingest fault is recorded like a fetch fault. */
  private async ingestDay(spec: SourceSpec, got: DayFetch & { outcome: 'papers' }, known: SourceDay | undefined, now: Date, log: Logger): Promise<PollReport> {
    try {
      const r = await this.ingest({ source: spec.name, date: got.day, papers: got.papers });
      await this.store.recordDay({ source: spec.name, day: got.day, status: 'ingested', batchId: r.batchId, now });
      log.info({ day: got.day, batchId: r.batchId, papers: r.papers, newPapers: r.newPapers, duplicate: r.duplicate }, 'source day ingested');
      return {
        source: spec.name,
        day: got.day,
        status: r.duplicate ? 'unchanged' : 'ingested',
        detail: r.duplicate ? 'same content as before' : ingestCounts(r),
        batchId: r.batchId,
        papers: r.papers,
        newPapers: r.newPapers,
      };
    } catch (e) {
      const reason = errorMessage(e);
      if (known?.status !== 'ingested') await this.store.recordDay({ source: spec.name, day: got.day, status: 'error', lastError: reason, now });
      log.warn({ day: got.day, err: reason }, 'source day could not be ingested');
      return { source: spec.name, day: got.day, status: 'error', detail: reason };
    }
  }
}

export function createSourcePoller(deps: SourcePollerDeps): SourcePoller {
  return new SourcePoller(deps);
}

/** One configured source as `digest sources` shows it. */
export interface SourceListing {
  source: string;
  kind: string;
  /** Latest day ingested. */
  lastDay: string | null;
  lastFetchedAt: string | null;
  /** The most recent unresolved failure, if any. */
  lastError: string | null;
  lastErrorDay: string | null;
  lastErrorAt: string | null;
  /** Every unresolved failed day (newest first, at most 10): source, day and reason for `digest status`. */
  errors: { day: string; error: string; at: string; attempts: number }[];
}

export function listSources(db: Db, specs: readonly SourceSpec[]): SourceListing[] {
  return specs.map((spec) => sourceListing(spec, sourceSummary(db, spec.name), sourceErrors(db, spec.name)));
}

/** One source's listing from its summary and unresolved failed days, newest first (either engine's rows). */
export function sourceListing(
  spec: SourceSpec,
  summary: { lastDay: string | null; lastFetchedAt: string | null },
  failed: readonly SourceDay[],
): SourceListing {
  const errors = failed.map(failedDay);
  const last = errors[0];
  return {
    source: spec.name,
    kind: spec.kind,
    lastDay: summary.lastDay,
    lastFetchedAt: summary.lastFetchedAt,
    lastError: last?.error ?? null,
    lastErrorDay: last?.day ?? null,
    lastErrorAt: last?.at ?? null,
    errors,
  };
}
