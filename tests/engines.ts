// Which engine each test file runs on (issue 39: "the suite runs on SQLite and, where PostgreSQL
// answers, on PostgreSQL too"). tests/unit/engines-manifest.test.ts fails when a test file is missing here
// or an entry gives no reason. The global setup prints the counts, so a run says what ran where.
//   both      the same scenarios on SQLite and on PostgreSQL (forEachEngine, tests/helpers/on-engines.ts);
//             PostgreSQL's half is skipped, said once, where it does not answer
//   postgres  PostgreSQL only (skipped without it): multi-process stories, PostgreSQL adapters, parity checks
//   sqlite    SQLite only, with why: SQLite's own mechanism, or "needs X on PostgreSQL" (not converted yet)
//   none      no store involved (parsers, renderer, MIME, SMTP, source scans): run once, either engine's the same
export type EngineDecl =
  | { engine: 'both' }
  | { engine: 'postgres' }
  | { engine: 'sqlite'; why: string }
  | { engine: 'none'; why: string };

const both: EngineDecl = { engine: 'both' };
const postgres: EngineDecl = { engine: 'postgres' };
const sqlite = (why: string): EngineDecl => ({ engine: 'sqlite', why });
const none = (why: string): EngineDecl => ({ engine: 'none', why });

/** Prefix of the reasons that name what PostgreSQL lacks today (the list of what is left). */
export const NEEDS = 'needs ';

const PURE = none('no store: pure code (parsing, rendering, MIME, tokens, arithmetic)');
const SOURCE_SCAN = none('no store: reads the source tree');
const SMTP = none('no store: our SMTP client or mailer against real SMTP servers');
const SEND_PATH = (why: string) => sqlite(`SQLite's send path (${why}); PostgreSQL's senders are \`digest worker\` processes: pg-workers, pg-worker-cli`);
const SQLITE_MIGRATION = sqlite("SQLite's own migrations (db/migrations/, an old file upgraded in place); PostgreSQL's: pg-migrate");
const PLANNER = sqlite("the SQLite planner itself; PostgreSQL's planner is compared with it row by row in pg-edition");

export const ENGINES: Readonly<Record<string, EngineDecl>> = {
  'tests/e2e/admin-console.test.ts': both,
  'tests/e2e/console-phone.test.ts': both,
  'tests/e2e/digest-reading.test.ts': none('no store: the renderer read in Chromium'),
  'tests/e2e/preview-budget.test.ts': both,
  'tests/e2e/subscriber-journey.test.ts': both,

  'tests/integration/admin-http.test.ts': both,
  'tests/integration/admin-import.test.ts': sqlite("SQLite's own mechanism: a 25,000-row import must not freeze the pages sharing the process's one connection (PostgreSQL's import: roster-engines)"),
  'tests/integration/api-batches.test.ts': both,
  'tests/integration/backup.test.ts': sqlite("SQLite's own mechanism (online file backup); PostgreSQL's is pg_dump"),
  'tests/integration/bounces-digest-reuse.test.ts': sqlite("SQLite's own mechanism (a deleted ledger row's id given to the next digest)"),
  'tests/integration/bounces-kinds.test.ts': both,
  'tests/integration/bounces-send-time.test.ts': SEND_PATH('a relay refusing at send time; pg-worker-cli sorts it there'),
  'tests/integration/bounces-smtp.test.ts': both,
  'tests/integration/bounces-verp-workers.test.ts': SEND_PATH('worker threads, SEND_WORKERS'),
  'tests/integration/bounces-webhooks.test.ts': both,
  'tests/integration/built-bin.test.ts': sqlite('what the build loads (dist/, no TypeScript at run time), run once on SQLite, the default: the store does not change it'),
  'tests/integration/config-faults.test.ts': sqlite("SQLite's own faults (a DATABASE_PATH that cannot be opened, a crash's leftovers in the file)"),
  'tests/integration/confirmation-delivery.test.ts': both,
  'tests/integration/consent.test.ts': both,
  'tests/integration/delivery-mailer.test.ts': SMTP,
  'tests/integration/delivery-processes.test.ts': both,
  'tests/integration/delivery-scale.test.ts': SEND_PATH('2,000 readers, a flaky relay'),
  'tests/integration/delivery-workers.test.ts': SEND_PATH('worker threads, SEND_WORKERS'),
  'tests/integration/delivery.test.ts': SEND_PATH('outcomes, retries and shutdown in-process'),
  'tests/integration/digest-loader-limit.test.ts': sqlite("the one digest loader, over SQLite (PostgreSQL's worker renders through it on an in-memory SQLite mirror: pg-worker-render)"),
  'tests/integration/digest-loader-token.test.ts': sqlite("the one digest loader, over SQLite (PostgreSQL's worker renders through it on an in-memory SQLite mirror: pg-worker-render)"),
  'tests/integration/doctor.test.ts': sqlite("`digest doctor`'s checks of the SQLite file and its disk; its relay, DNS and feed checks do not depend on the store"),
  'tests/integration/door-engines.test.ts': both,
  'tests/integration/end-to-end.test.ts': both,
  // its store stories on both (shared rate limits, console sessions, /metrics); run once: the local inbox (files beside the SQLite file: local-inbox) and what is decided before any store is asked
  'tests/integration/exposure-http.test.ts': both,
  'tests/integration/feed-leaving.test.ts': both,
  'tests/integration/feed-text-clean.test.ts': both,
  'tests/integration/feedback-relevance.test.ts': both,
  'tests/integration/feedback-story.test.ts': both,
  'tests/integration/html-7bit-smtp.test.ts': SMTP,
  'tests/integration/import-cli.test.ts': both,
  'tests/integration/import-under-load.test.ts': sqlite("SQLite's own mechanism (busy timeout: a 50,000-row import beside the web's connection)"),
  'tests/integration/import-upkeep-race.test.ts': both,
  'tests/integration/import.test.ts': sqlite("the SQLite import streamer; PostgreSQL's import: roster-engines, pg-roster-cli"),
  'tests/integration/ingest-fetch.test.ts': none('no store: fetch and load against a local HTTP server'),
  'tests/integration/ingest.test.ts': sqlite("the SQLite ingest; PostgreSQL's gives the same papers: pg-plan-cli, pg-edition"),
  'tests/integration/learning-prefs.test.ts': both,
  'tests/integration/ledger-indexes.test.ts': sqlite("SQLite's migration 007 and SQLite's query plans for the ledger"),
  'tests/integration/like-amplifier.test.ts': both,
  'tests/integration/like-refresh.test.ts': sqlite("SQLite chooses a like: topic's terms at save and again as the index grows; PostgreSQL chooses them at every matching run: pg-like"),
  'tests/integration/like-web.test.ts': sqlite('SQLite refuses at save an example sharing no word with any paper; PostgreSQL logs it at matching (README): pg-like'),
  'tests/integration/like.test.ts': sqlite("SQLite's FTS5 term choice at save; PostgreSQL's: pg-like"),
  'tests/integration/local-inbox.test.ts': sqlite('the local mail catcher (no SMTP_URL), a one-machine convenience: its pages read files beside the SQLite database, not the store'),
  'tests/integration/match-in-memory.test.ts': sqlite('the in-memory FTS5 matcher PostgreSQL uses, checked against the SQLite store; on PostgreSQL: pg-edition'),
  'tests/integration/matcher-preview.test.ts': sqlite("previewTopic's statements over a SQLite database; on PostgreSQL the same statements run over its papers mirrored in memory (match/postgres/preview.ts): topic-preview-engines"),
  'tests/integration/matching-engines.test.ts': both,
  'tests/integration/matcher.test.ts': sqlite("SQLite's FTS5 itself (random syntax never an SQLite error, tokenizer parity, highlights) and SQLite's matchPending; the topic language's cases on both: matching-engines"),
  'tests/integration/migration-002.test.ts': SQLITE_MIGRATION,
  'tests/integration/migration-003.test.ts': SQLITE_MIGRATION,
  'tests/integration/migration-010.test.ts': SQLITE_MIGRATION,
  'tests/integration/migration-011.test.ts': SQLITE_MIGRATION,
  'tests/integration/migration-015.test.ts': SQLITE_MIGRATION,
  // its --version describe runs once: no store
  'tests/integration/operating-cli.test.ts': both,
  // its `digest backup` describe stays SQLite's: it copies the file (SQLite's own mechanism; PostgreSQL's backup is pg_dump, README)
  'tests/integration/operator-cli.test.ts': both,
  'tests/integration/operator-figures.test.ts': sqlite("SQLite's figures, seeded in its ledger; the same scenario on both stores: pg-operator-figures"),
  'tests/integration/paper-row.test.ts': sqlite("SQLite's paper row mapper (db/paper-row.ts)"),
  'tests/integration/pg-after-restore.test.ts': postgres,
  'tests/integration/pg-bounces.test.ts': postgres,
  'tests/integration/pg-unsubscribe-cli.test.ts': postgres,
  'tests/integration/pg-console-sessions.test.ts': postgres,
  'tests/integration/pg-copy.test.ts': postgres,
  'tests/integration/pg-door-instances.test.ts': postgres,
  'tests/integration/pg-door-serve.test.ts': postgres,
  'tests/integration/pg-edition.test.ts': postgres,
  'tests/integration/pg-webview.test.ts': postgres,
  'tests/integration/pg-run-status.test.ts': postgres,
  'tests/integration/pg-overview-cache.test.ts': postgres,
  'tests/integration/pg-operating-cli.test.ts': postgres,
  'tests/integration/pg-backup-secret.test.ts': postgres,
  'tests/integration/pg-preview-budget.test.ts': postgres,
  'tests/integration/pg-lock-schemas.test.ts': postgres,
  'tests/integration/pg-ledger-indexes.test.ts': postgres,
  'tests/integration/pg-import.test.ts': postgres,
  'tests/integration/pg-ledger.test.ts': postgres,
  'tests/integration/pg-like.test.ts': postgres,
  'tests/integration/pg-migrate.test.ts': postgres,
  'tests/integration/pg-models.test.ts': postgres,
  'tests/integration/pg-operator-figures.test.ts': postgres,
  'tests/integration/pg-plan-cli.test.ts': postgres,
  'tests/integration/pg-restart.test.ts': postgres,
  'tests/integration/pg-roster-cli.test.ts': postgres,
  'tests/integration/pg-sources.test.ts': postgres,
  'tests/integration/pg-week-story.test.ts': postgres,
  'tests/integration/pg-worker-cli.test.ts': postgres,
  'tests/integration/pg-worker-record-fails.test.ts': postgres,
  'tests/integration/pg-worker-render.test.ts': postgres,
  'tests/integration/pg-workers.test.ts': postgres,
  'tests/integration/pipeline-upkeep.test.ts': both,
  'tests/integration/plan-groups.test.ts': PLANNER,
  'tests/integration/plan-per-query.test.ts': PLANNER,
  'tests/integration/planner.test.ts': PLANNER,
  'tests/integration/preview.test.ts': sqlite('SQLite preview in-process; PostgreSQL preview through the built CLI: pg-operating-cli'),
  'tests/integration/process-manager.test.ts': sqlite('signals, log lines and the systemd unit of `digest serve`, run once on SQLite, the default: the store does not change them'),
  'tests/integration/reader-links-engines.test.ts': both,
  'tests/integration/reader-models-upgrade.test.ts': sqlite("SQLite's lazy training at plan time (LAZY_TRAIN_MAX); PostgreSQL's model pass: pg-models"),
  'tests/integration/relay-ambiguity.test.ts': SEND_PATH("a relay's answer lost after the data"),
  'tests/integration/restore.test.ts': sqlite("SQLite's own mechanism (file restore); PostgreSQL's: pg-after-restore"),
  'tests/integration/roster-engines.test.ts': both,
  'tests/integration/schedule-guards.test.ts': both,
  'tests/integration/schedule-week.test.ts': both,
  'tests/integration/send-heap-budget.test.ts': SEND_PATH("a sending thread's heap"),
  'tests/integration/shared-limits.test.ts': both,
  'tests/integration/shared-spacing.test.ts': both,
  'tests/integration/smtp-client.test.ts': SMTP,
  'tests/integration/smtp-credentials.test.ts': both,
  'tests/integration/smtp-data-phase.test.ts': SMTP,
  'tests/integration/smtp-pool.test.ts': SMTP,
  'tests/integration/smtp-postfix.test.ts': SMTP,
  'tests/integration/source-kinds.test.ts': sqlite("the source poller into SQLite; into PostgreSQL: pg-sources (the same poller behind a store port)"),
  'tests/integration/sources-digest.test.ts': both,
  'tests/integration/sources.test.ts': sqlite("the source poller into SQLite; into PostgreSQL: pg-sources (the same poller behind a store port)"),
  'tests/integration/storage-faults.test.ts': sqlite("SQLite's own mechanism (another process's write lock, a full tmpfs, a read-only file)"),
  'tests/integration/storage-full-health.test.ts': sqlite("SQLite's own mechanism (the database's disk full); PostgreSQL's /health faults: pg-operator-figures"),
  'tests/integration/storage-lock-bound.test.ts': sqlite("SQLite's own mechanism (busy timeout under another process's write lock)"),
  'tests/integration/subscribers.test.ts': sqlite("the SQLite subscriber service in-process; PostgreSQL's door through HTTP: door-engines, web"),
  'tests/integration/topic-nesting.test.ts': both,
  'tests/integration/topic-preview-engines.test.ts': both,
  'tests/integration/web-pages.test.ts': sqlite("papers seeded into the SQLite file and the web view of a digest written into SQLite's ledger; the topic builder's preview on PostgreSQL: topic-preview-engines, the web view: reader-links-engines"),
  'tests/integration/web-preferences.test.ts': both,
  'tests/integration/web-view-share.test.ts': both,
  'tests/integration/web.test.ts': both,

  'tests/unit/topic-changes.test.ts': PURE,
  'tests/unit/admin-password.test.ts': PURE,
  'tests/unit/architecture.test.ts': SOURCE_SCAN,
  'tests/unit/backoff.test.ts': PURE,
  'tests/unit/batch-values.test.ts': sqlite("SQLite's multi-row VALUES statements (runBatched)"),
  'tests/unit/bounce-classify.test.ts': PURE,
  'tests/unit/bounces-parse.test.ts': PURE,
  'tests/unit/config-check.test.ts': PURE,
  'tests/unit/console-reading.test.ts': PURE,
  'tests/unit/delivery-words.test.ts': PURE,
  'tests/unit/dkim.test.ts': PURE,
  'tests/unit/dot-stuffing.test.ts': PURE,
  'tests/unit/engines-manifest.test.ts': SOURCE_SCAN,
  'tests/unit/function-budget.test.ts': SOURCE_SCAN,
  'tests/unit/html-body.test.ts': PURE,
  'tests/unit/html-fixed-run.test.ts': PURE,
  'tests/unit/html.test.ts': PURE,
  'tests/unit/http-status-in-web.test.ts': SOURCE_SCAN,
  'tests/unit/ingest-normalize.test.ts': PURE,
  'tests/unit/ingest-readers.test.ts': PURE,
  'tests/unit/ingest-schema.test.ts': PURE,
  'tests/unit/latent.test.ts': PURE,
  'tests/unit/learning-ingest.test.ts': PURE,
  'tests/unit/ledger-owns-digests.test.ts': SOURCE_SCAN,
  'tests/unit/like-terms.test.ts': PURE,
  'tests/unit/mail-headers.test.ts': PURE,
  'tests/unit/merge-lists.test.ts': PURE,
  'tests/unit/message-builder-parity.test.ts': PURE,
  'tests/unit/model-quality.test.ts': PURE,
  'tests/unit/paper-days.test.ts': PURE,
  'tests/unit/plan-items.test.ts': PURE,
  'tests/unit/qp-body.test.ts': PURE,
  'tests/unit/raw-message.test.ts': PURE,
  'tests/unit/reader-model.test.ts': PURE,
  'tests/unit/reader-shape.test.ts': PURE,
  'tests/unit/readme-examples.test.ts': SOURCE_SCAN,
  'tests/unit/render-format.test.ts': PURE,
  'tests/unit/render-layout.test.ts': none('no store: the renderer read in Chromium'),
  'tests/unit/render-learning.test.ts': PURE,
  'tests/unit/render-long-digests.test.ts': PURE,
  'tests/unit/render.test.ts': PURE,
  'tests/unit/request-log.test.ts': PURE,
  'tests/unit/retry-policy.test.ts': PURE,
  'tests/unit/tokens.test.ts': PURE,
  'tests/unit/topic-label.test.ts': PURE,
  'tests/unit/topics-filters.test.ts': PURE,
  'tests/unit/topics-highlight.test.ts': PURE,
  'tests/unit/topics-parse.test.ts': PURE,
  'tests/unit/web-favicon.test.ts': PURE,
  'tests/unit/write-turn.test.ts': none("no store: the sending threads' turn-taking on its own"),
};

/** Files per kind (the global setup prints these). */
export function engineCounts(): Record<EngineDecl['engine'], number> {
  const n = { both: 0, postgres: 0, sqlite: 0, none: 0 };
  for (const d of Object.values(ENGINES)) n[d.engine]++;
  return n;
}
