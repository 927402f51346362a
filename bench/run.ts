// `npm run bench -- --subscribers 100000 --papers 1000 --topics 3 [--topics-profile broad] [--smtp smtp://host:port]`
//   --topics-profile: friendly (default: half the list gets 5-30 papers) or broad (everyone has common
//   two-word phrases: ~150-250 papers per digest, long digests with compact lines) or diverse (three of 3,000
//   quoted two-word phrases each, skewed: ~150-250 papers, nearly one topic set per reader); other options: --pool N (SMTP_POOL_SIZE, the service's default: 10), --workers N (SEND_WORKERS), --worker-heap-mb N (SEND_WORKER_HEAP_MB), --sample N (naive baseline, 200),
//   --ceiling-messages N, --seed N, --profile DIR (a CPU profile per stage), --json FILE, --keep (keep the temp dir),
//   --sink postfix|node (the relay: Postfix's smtp-sink, the default where installed, or bench/sink.ts),
//   --learning (a third of the subscribers with a like: topic and a feedback profile),
//   --send-in-child (send with `digest run` in a child process and report its peak RSS: the service alone),
//   --save-planned FILE (a copy of the database once planned, before sending: an edition to send or render again),
//   --plan-lists per-query|per-topic-set (PlanOptions.lists: the two ways of sharing planned lists, to compare),
//   --render-free (implies --send-in-child: every thread of `digest run` sends its first rendered digest to
//   every reader, bench/render-free.mjs: what the run costs beside rendering, a floor no renderer can beat),
//   --engine postgres [--workers N] [--lanes L]: the edition in PostgreSQL, sent by N `digest worker` processes
//   (bench/run-postgres.ts; DATABASE_URL or the local server, a scratch schema dropped unless --keep)
//
// Builds a synthetic database in a temporary directory, then runs the real pipeline stage by stage:
// import (CSV, setup) -> ingest (parseFeed + ingestBatch) -> match (matchPending) -> plan (planDigests)
// -> render + send (sendPending with the real SMTP mailer, into a discarding sink in a child process).
// In the same run it measures the ceiling (one pre-built message sent over and over by the service's own
// pool), issue 41's (Postfix's smtp-source, same size, same sink: bench/ceiling-smtp-source.ts) and the
// naive baseline (per-subscriber JS matching + mjml2html, on a sample), and prints our rate against each.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { systemClock } from '../src/clock.ts';
import { DEFAULT_SMTP_POOL_SIZE, loadConfig } from '../src/config.ts';
import { planDigests } from '../src/plan/planner.ts';
import { sendPending } from '../src/send/sender.ts';
import type { SendSummary } from '../src/send/send-types.ts';
import { loadDigest } from '../src/render/view.ts';
import { parseFeed } from '../src/ingest/detect.ts';
import { ingestBatch } from '../src/ingest/ingest.ts';
import { createLogger } from '../src/log.ts';
import { createAppWithDb, type App } from '../src/main.ts';
import { matchPending } from '../src/match/matcher.ts';
import { measureCeiling, prebuildMessage } from './ceiling.ts';
import { measureSmtpSourceCeiling, SMTP_SOURCE, smtpSourceLines } from './ceiling-smtp-source.ts';
import { generateInChild, importInChild, sendInChild } from './children.ts';
import { setupLearning } from './learning.ts';
import { distribution, fmt, peakRssMb, StageClock } from './measure.ts';
import { measureNaive } from './naive.ts';
import { gcLine, printProfiles, target } from './report-lines.ts';
import { measurePerDigest } from './per-digest.ts';
import type { SinkMessage, SinkStats } from './sink.ts';
import { POSTFIX_SMTP_SINK, startPostfixSink, type PostfixSink } from './postfix-sink.ts';

const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '10000' },
    papers: { type: 'string', default: '1000' },
    topics: { type: 'string', default: '3' },
    'topics-profile': { type: 'string', default: 'friendly' },
    smtp: { type: 'string' },
    sink: { type: 'string', default: existsSync(POSTFIX_SMTP_SINK) ? 'postfix' : 'node' },
    pool: { type: 'string', default: String(DEFAULT_SMTP_POOL_SIZE) },
    workers: { type: 'string' },
    'worker-heap-mb': { type: 'string' },
    /** Send with `digest run` (compiled CLI) in a child process: its peak RSS is what an operator's run takes. */
    'send-in-child': { type: 'boolean', default: false },
    'child-node-options': { type: 'string' },
    /** The send stage with rendering free (bench/render-free.mjs): a floor, not the service's rate. */
    'render-free': { type: 'boolean', default: false },
    'plan-lists': { type: 'string' },
    'save-message': { type: 'string' },
    /** A copy of the database once planned, before sending: an edition to send again (`digest run`) or to render in a loop. */
    'save-planned': { type: 'string' },
    sample: { type: 'string', default: '200' },
    'ceiling-messages': { type: 'string' },
    seed: { type: 'string', default: '1' },
    profile: { type: 'string' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
    /** Issue 13: a third of the subscribers with a like: topic and a feedback profile (bench/learning.ts). */
    learning: { type: 'boolean', default: false },
    /** postgres: the edition in PostgreSQL, sent by --workers `digest worker` processes (bench/run-postgres.ts). */
    engine: { type: 'string', default: 'sqlite' },
    lanes: { type: 'string' },
  },
});
if (o.engine === 'postgres') {
  await (await import('./run-postgres.ts')).runPostgresBench(o);
  process.exit();
} else if (o.engine !== 'sqlite') {
  console.error(`--engine: sqlite or postgres, got ${o.engine}`);
  process.exit(2);
}
const SUBSCRIBERS = positiveInt('subscribers');
const PAPERS = positiveInt('papers');
const TOPICS = positiveInt('topics');
const POOL = positiveInt('pool');
const PROFILE = o['topics-profile'];
if (PROFILE !== 'friendly' && PROFILE !== 'broad' && PROFILE !== 'diverse') {
  console.error(`--topics-profile: friendly, broad or diverse, got ${PROFILE}`);
  process.exit(2);
}
const SAMPLE = positiveInt('sample');
const PUBLIC_URL = 'https://digest.bench.example';
const MAIL_FROM = 'Paper Digest <digest@bench.example>';
const log = (line: string) => process.stderr.write(`${line}\n`);
/** The stages that make up "end to end" (setup stages and the two comparisons are not in it). */
const PIPELINE = ['ingest', 'match', 'plan', 'render+send'];

const loadAtStart = loadavg()[0]!;
const dir = mkdtempSync(join(tmpdir(), 'digest-bench-'));
const profileDir = o.profile ? (mkdirSync(o.profile, { recursive: true }), o.profile) : undefined;
const clock = new StageClock(profileDir, log);
let sink: ChildProcess | undefined;
let postfix: PostfixSink | undefined;
let app_: Pick<App, 'close' | 'renderer'> | undefined;
/** Set when the send stage ran as `digest run` in a child process (--send-in-child). */
let childRun: { peakRssMb: number; cpuSeconds: number } | undefined;

try {
  if (o.sink !== 'postfix' && o.sink !== 'node') {
    console.error(`--sink: postfix or node, got ${o.sink}`);
    process.exit(2);
  }
  const smtpUrl = o.smtp ?? (o.sink === 'postfix' ? (postfix = await startPostfixSink()).url : await startSink());
  const sinkName = o.smtp ? `external ${o.smtp}` : o.sink === 'postfix' ? "Postfix's smtp-sink" : 'bench/sink.ts (Node smtp-server)';
  log(`bench: ${fmt.int(SUBSCRIBERS)} subscribers × ${fmt.int(PAPERS)} papers × ${TOPICS} ${PROFILE} topics; SMTP ${smtpUrl} (${sinkName}); data in ${dir}`);

  // --- setup: papers and subscribers, written the way users would (a batch file, a CSV) ----------------
  const csvFile = join(dir, 'subscribers.csv');
  const batchFile = join(dir, 'batch.json');
  // In a child process, so that this process's memory figures are the service's alone.
  const population = await clock.run(
    'generate',
    () => generateInChild({ subscribers: SUBSCRIBERS, papers: PAPERS, topics: TOPICS, profile: PROFILE, seed: o.seed }, batchFile, csvFile),
    (p) => `${fmt.int(p.papers)} papers; ${fmt.int(p.rows)} CSV rows (${fmt.int(p.bytes / 1e6)} MB), ${fmt.int(p.distinctTopics)} distinct topics, top topic on ${(p.topTopicShare * 100).toFixed(1)}% of subscribers`,
  );

  const config = loadConfig({
    DATABASE_PATH: join(dir, 'bench.sqlite'),
    SMTP_URL: smtpUrl,
    SMTP_POOL_SIZE: String(POOL),
    ...(o.workers ? { SEND_WORKERS: o.workers } : {}),
    ...(o['worker-heap-mb'] ? { SEND_WORKER_HEAP_MB: o['worker-heap-mb'] } : {}),
    SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
    PUBLIC_URL,
    MAIL_FROM,
    DIGEST_TZ: 'UTC',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  });
  const app = await clock.run(
    'start app',
    // The benchmark times the stages one by one on the app's own connection (createAppWithDb).
    async () => {
      const made = await createAppWithDb(config, { clock: systemClock, logger: createLogger(config.LOG_LEVEL) });
      return { ...made.app, db: made.db };
    },
    () => 'createApp: database, MJML templates compiled, SMTP pool',
  );
  const { db } = app;
  app_ = app;

  // `digest import` in its own process, as an operator runs it: the CSV's parsing and staging are not the
  // send run's memory (before, in this process, they raised its peak RSS by ~100 MB at 100k rows).
  await clock.run(
    'import',
    () => importInChild(csvFile, config),
    (n, s) => `${fmt.int(n)} subscribers (\`digest import\`, child process), ${fmt.rate(n / s)} rows/s`,
  );
  if (o.learning) {
    await clock.run(
      'learning setup',
      () => setupLearning(db, app.clock),
      (r) => `${fmt.int(r.likeSubscribers)} like: topics, ${fmt.int(r.profiles)} profiles (${fmt.int(r.profileTerms)} terms)`,
    );
  }

  const dbBytes = () => {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const path = config.DATABASE_PATH;
    return statSync(path).size + (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);
  };
  const dbBeforeEdition = dbBytes();

  // --- the pipeline --------------------------------------------------------------------------------
  await clock.run(
    'ingest',
    () => ingestBatch(db, parseFeed(readFileSync(batchFile, 'utf8'), 'batch'), app.clock),
    (r) => `${fmt.int(r.newPapers)} new papers (batch ${r.batchId})`,
  );
  const matched = await clock.run('match', () => matchPending(db), (r) => `${fmt.int(r.queries)} distinct queries, ${fmt.int(r.matches)} matches`);
  const plan = await clock.run('plan', () => planDigests(db, { clock: app.clock, mode: 'now', ...planLists() }), (r) => `${fmt.int(r.planned)} digests, ${fmt.int(r.items)} papers in them`);
  const sizes = distribution((db.prepare(`SELECT paper_count AS n FROM digests`).all() as { n: number }[]).map((r) => r.n));
  if (o['save-planned']) {
    // Outside the timed stages: a consistent copy (SQLite's online backup) of the planned edition.
    await db.backup(o['save-planned']);
    log(`  planned edition saved to ${o['save-planned']} (send it: DATABASE_PATH=… digest run; render it: node bench/load-render-loop.mjs dist …)`);
  }

  // CPU time of this process (every thread) and of the sink over the send stage: per digest, it moves
  // much less with the machine's load than digests/s does (other engineers share the two cores).
  const cpuBefore = cpuMs();
  const sinkCpuBefore = postfix?.stats().cpuSeconds;
  const sent = await clock.run(
    'render+send',
    () => (o['send-in-child'] || o['render-free'] ? sendInChildRun(config) : sendPending(app, { retryWindowMs: 0 })),
    (r, s) =>
      `${fmt.int(r.sent)} sent, ${r.failed} failed, ${r.retrying} retrying; ${fmt.rate(r.sent / s)} digests/s; ` +
      (childRun
        ? `\`digest run\` in a child process, its peak RSS ${childRun.peakRssMb} MB`
        : `${r.threads ?? 1} thread(s) sent ${(r.sentPerThread ?? [r.sent]).map(fmt.int).join(' + ')}`),
  );
  const sendCpuMs = cpuMs() - cpuBefore;
  const sinkSendCpuMs = sinkCpuBefore === undefined ? undefined : (postfix!.stats().cpuSeconds - sinkCpuBefore) * 1000;
  if (sent.failed + sent.retrying + sent.unknown > 0 || sent.paused) log(`WARNING: not every digest was sent: ${JSON.stringify(sent)}`);
  // What the edition cost on disk, and the mean size of the messages the sink received for it.
  const dbGrowth = dbBytes() - dbBeforeEdition;
  const ledger = db.prepare(`SELECT count(*) AS rows, avg(length(items)) AS items FROM digests`).get() as { rows: number; items: number };
  const sentStats = sink ? await askSink() : undefined;
  const meanMessageBytes = sentStats && sentStats.messages > 0 ? sentStats.bytes / sentStats.messages : undefined;
  const endToEnd = PIPELINE.reduce((sum, n) => sum + clock.seconds(n), 0);
  const ourRate = sent.sent / endToEnd;

  const perDigest = await clock.run(
    'per-digest CPU',
    () => measurePerDigest({ db, links: app.links, renderer: app.renderer, from: MAIL_FROM }, 2_000),
    (c) =>
      `${fmt.int(c.digests)} digests sampled, one thread: load ${c.loadMs.toFixed(3)} + render ${c.renderMs.toFixed(3)} + ` +
      `build MIME ${c.buildMs.toFixed(3)} ms per digest; messages ${fmt.int(c.messageBytes / 1024)} KB; ` +
      `${c.fullPapers.toFixed(1)} papers in full + ${c.compactPapers.toFixed(1)} compact per email; card cache (this thread): ${cacheLine()}`,
  );

  // --- ceiling and naive baseline, same run, same sink ---------------------------------------------
  // The ceiling sends one pre-built message of the same size as the mean one sent (the sampled digest
  // whose message is closest to that mean), so the two rates compare like for like.
  const targetBytes = meanMessageBytes ?? perDigest.messageBytes;
  const sampleId = perDigest.sizes.reduce((best, s) => (Math.abs(s.bytes - targetBytes) < Math.abs(best.bytes - targetBytes) ? s : best)).id;
  const sample = loadDigest(db, sampleId, app.links)!;
  const sampleMail = app.renderer.digest(sample.view);
  const raw = prebuildMessage({ from: MAIL_FROM, to: sample.subscriber.email, mail: sampleMail, unsubscribeUrl: sample.view.links.unsubscribe });
  // `--save-message FILE`: the ceiling's message (a digest of the mean size, as built) to read or measure.
  if (o['save-message']) writeFileSync(o['save-message'], raw);
  const ceilingMessages = o['ceiling-messages'] ? Number(o['ceiling-messages']) : Math.min(Math.max(sent.sent, 2_000), 50_000);
  const ceilingCpuBefore = cpuMs();
  const ceiling = await clock.run(
    'ceiling',
    () => measureCeiling({ url: smtpUrl, poolSize: POOL, raw, from: MAIL_FROM, to: sample.subscriber.email, messages: ceilingMessages }),
    (c) =>
      `${fmt.int(c.messages)} × one pre-built ${fmt.int(c.messageBytes / 1024)} KB message: ${fmt.rate(c.perSecond)} messages/s, ` +
      `${((cpuMs() - ceilingCpuBefore) / c.messages).toFixed(3)} ms CPU per message (this process, warm-up included)`,
  );
  // Issue 41's ceiling: Postfix's smtp-source, messages of the same size, the same sink, -s = the pool size.
  const smtpSource = !existsSync(SMTP_SOURCE) ? undefined : await clock.run(
    'ceiling (smtp-source)',
    () => measureSmtpSourceCeiling({ url: smtpUrl, sessions: POOL, messageBytes: raw.length, messages: ceilingMessages, from: 'digest@bench.example', to: sample.subscriber.email, subject: sampleMail.subject, ...(postfix ? { sinkCpuSeconds: () => postfix!.stats().cpuSeconds } : {}) }),
    (c) => `${fmt.int(c.messages)} × ${fmt.int(c.messageBytes / 1024)} KB (-l ${c.payloadBytes}, -s ${c.sessions}${c.reuse ? ' -d' : ''}): ${fmt.rate(c.perSecond)} messages/s, ${((c.cpuSeconds * 1000) / c.messages).toFixed(3)} ms CPU per message in smtp-source`,
  );
  const naive = await clock.run(
    'naive',
    () => measureNaive(db, { sample: SAMPLE, subscribers: SUBSCRIBERS, publicUrl: PUBLIC_URL }),
    (n) =>
      `${n.sampled} subscribers sampled, ${n.digests} digests: JS matching ${n.matchMsPerSubscriber.toFixed(2)} ms/subscriber, ` +
      `mjml2html ${n.mjmlMsPerDigest.toFixed(1)} ms/digest -> ${fmt.rate(n.digestsPerSecond)} digests/s`,
  );
  const sinkStats = sink ? await askSink() : postfix?.stats();
  const sqliteVersion = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  await app.close();

  // --- report ----------------------------------------------------------------------------------------
  const receiving = plan.planned / SUBSCRIBERS;
  // Diverse digests are as long as broad ones: the same memory, ceiling-share and database targets (issue 41).
  const broad = PROFILE !== 'friendly';
  const rssLimit = broad ? 400 : SUBSCRIBERS > 100_000 ? 512 : 300;
  const rateTarget = PROFILE === 'broad' ? 1_000 : PROFILE === 'diverse' ? undefined : 1_500;
  const ceilingShare = broad ? 0.5 : 0.4;
  const growthPer100k = (dbGrowth / 1e6) * (100_000 / SUBSCRIBERS);
  // The service's peak: this process's high-water mark at the end of the pipeline (the stages after it,
  // per-digest CPU, ceiling and naive, are the bench's own measurements), or with --send-in-child the
  // child's when higher (the send stage's memory is then `digest run`'s alone, no bench or tsx in it).
  const pipelineStages = clock.stages.filter((s) => PIPELINE.includes(s.name));
  const peakPipeline = Math.max(...pipelineStages.map((s) => s.peakRssMb), childRun?.peakRssMb ?? 0);
  const lines = [
    '',
    `paper-digest benchmark — ${fmt.int(SUBSCRIBERS)} subscribers × ${fmt.int(PAPERS)} papers × ${TOPICS} topics (${PROFILE} profile), SMTP pool ${POOL}, relay ${sinkName}`,
    `machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.versions.node}, SQLite ${sqliteVersion}; ` +
      `load average at start ${loadAtStart.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)} (other processes share the cores)`,
    `data: ${fmt.int(population.distinctTopics)} distinct topic texts; ${(receiving * 100).toFixed(1)}% of subscribers get a digest; papers per digest mean ${sizes.mean.toFixed(1)} / min ${sizes.min} / median ${sizes.median} / p90 ${sizes.p90} / max ${sizes.max}`,
    `messages: mean ${meanMessageBytes === undefined ? `${fmt.int(perDigest.messageBytes / 1024)} KB as built (sampled)` : `${fmt.int(meanMessageBytes / 1024)} KB as received by the sink`}; ledger: ${fmt.int(ledger.rows)} rows, ` +
      `${fmt.int(dbGrowth / Math.max(1, ledger.rows))} bytes per row on disk (paper lists ${ledger.items?.toFixed(0) ?? 0} bytes), database growth ${fmt.int(dbGrowth / 1e6)} MB this edition`,
    '',
    'stage            seconds   what, rate   [peak RSS so far; peak V8 heap, external during the stage]',
    ...clock.stages.map(
      (s) => `${s.name.padEnd(16)} ${fmt.s(s.seconds).padStart(7)}   ${s.detail}  [${s.peakRssMb} MB; ${s.heapMb} / ${s.externalMb} MB]`,
    ),
    `GC per sending thread: ${gcLine(sent)}`,
    childRun
      ? `peak RSS of \`digest run\` (child process, every thread): ${childRun.peakRssMb} MB`
      : `render inside the send stage: ${fmt.s((sent.renderMs ?? 0) / 1000)} s CPU over all threads = ${((sent.renderMs ?? 0) / Math.max(1, sent.sent)).toFixed(3)} ms/digest`,
    '',
    ...(childRun
      ? [
          // CPU per digest moves much less with the machine's load than digests/s does.
          `CPU of \`digest run\` (every thread): ${((childRun.cpuSeconds * 1000) / Math.max(1, sent.sent)).toFixed(3)} ms per digest` +
            (sinkSendCpuMs === undefined ? '' : ` + ${(sinkSendCpuMs / Math.max(1, sent.sent)).toFixed(3)} ms in the sink`),
        ]
      : [
          `CPU in the send stage: ${(sendCpuMs / Math.max(1, sent.sent)).toFixed(3)} ms per digest in this process (every thread)` +
            (sinkSendCpuMs === undefined ? '' : ` + ${(sinkSendCpuMs / Math.max(1, sent.sent)).toFixed(3)} ms in the sink`),
        ]),
    ...(o['render-free'] ? ['RENDER-FREE FLOOR (--render-free): each thread sent its first rendered digest to every reader; no renderer can beat these rates'] : []),
    `END TO END (ingest -> match -> plan -> render+send): ${fmt.s(endToEnd)} s, ${fmt.int(sent.sent)} digests = ${fmt.rate(ourRate)} digests/s`,
    `vs ceiling (pre-built message, same pool and sink): ${fmt.rate(ceiling.perSecond)} messages/s -> ours = ${((ourRate / ceiling.perSecond) * 100).toFixed(0)}% of the ceiling`,
    ...(smtpSource ? smtpSourceLines(smtpSource, ourRate, ceiling.perSecond) : []),
    `vs naive (per-subscriber JS matching + mjml2html): ${fmt.rate(naive.digestsPerSecond)} digests/s -> ours = ${(ourRate / naive.digestsPerSecond).toFixed(1)}× the naive rate`,
    `matching: distinct FTS5 queries ${fmt.s(matched.ms / 1000)} s vs per-subscriber JS loop ${fmt.s(naive.matchSecondsForAll)} s (extrapolated) -> ${(naive.matchSecondsForAll / (matched.ms / 1000)).toFixed(0)}× faster`,
    `peak RSS: bench process ${peakRssMb()} MB (pipeline stages ${peakPipeline} MB${childRun ? ', the send stage\'s being `digest run`\'s' : ''}); sink ${sinkStats ? `${sinkStats.maxRssMb} MB, ${sinkStats.messages < 0 ? '' : `${fmt.int(sinkStats.messages)} messages, ${fmt.int(sinkStats.bytes / 1e6)} MB received, `}${sinkStats.cpuSeconds} CPU s` : 'external (not measured)'}`,
    '',
    o['render-free'] ? 'targets, at the floor (a MISS here no rendering work can make up):' : 'targets:',
    ...(rateTarget === undefined ? [] : [target(ourRate >= rateTarget, `end to end ≥ ${fmt.int(rateTarget)} digests/s (${fmt.rate(ourRate)})`)]),
    target(ourRate >= ceilingShare * ceiling.perSecond, `≥ ${ceilingShare * 100}% of the ceiling (${((ourRate / ceiling.perSecond) * 100).toFixed(0)}%)`),
    ...(smtpSource ? [target(ourRate >= ceilingShare * smtpSource.perSecond, `≥ ${ceilingShare * 100}% of issue 41's ceiling, smtp-source's (${((ourRate / smtpSource.perSecond) * 100).toFixed(0)}%)`)] : []),
    ...(broad ? [target(growthPer100k < 100, `database growth < 100 MB per 100k-subscriber edition (${growthPer100k.toFixed(0)} MB)`)] : []),
    target(matched.ms < 2000 * Math.max(1, (SUBSCRIBERS / 100_000) * (PAPERS / 1000)), `matching under 2 s per 100k × 1,000 (${fmt.s(matched.ms / 1000)} s)`),
    target(peakPipeline < rssLimit, `peak RSS under ${rssLimit} MB (${peakPipeline} MB)`),
  ];
  console.log(lines.join('\n'));
  if (profileDir) printProfiles(clock.stages);
  if (o.json) {
    writeFileSync(o.json, JSON.stringify({ options: o, population, plan, sizes, sent, sendCpuMs, sinkSendCpuMs, childRun, dbGrowth, ledger, meanMessageBytes, endToEnd, ourRate, perDigest, ceiling, smtpSource, naive, matched, sink: sinkStats, stages: clock.stages }, null, 1));
  }
} finally {
  clock.close();
  sink?.send('stop');
  postfix?.stop();
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
}

/** `digest run` in a child process, its peak RSS kept for the report. */
async function sendInChildRun(config: ReturnType<typeof loadConfig>): Promise<SendSummary> {
  const run = await sendInChild(config, {
    pool: POOL,
    workers: o.workers,
    workerHeapMb: o['worker-heap-mb'],
    nodeOptions: o['child-node-options'],
    renderFree: o['render-free'],
    logDir: dir,
  });
  childRun = { peakRssMb: run.peakRssMb, cpuSeconds: run.cpuSeconds };
  return run.summary;
}

function cacheLine(): string {
  const c = app_?.renderer.cacheStats?.();
  if (!c) return '?';
  return `${fmt.int(c.entries)} entries, ${fmt.int(c.bytes / 2 ** 20)} MB, ${((c.hits / Math.max(1, c.hits + c.misses)) * 100).toFixed(1)}% hits (${fmt.int(c.misses)} built)`;
}

function positiveInt(name: keyof typeof o): number {
  const n = Number(o[name]);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--${name}: expected a positive whole number, got ${String(o[name])}`);
    process.exit(2);
  }
  return n;
}

/** Starts bench/sink.ts in a child process and resolves its URL once it listens. */
function startSink(): Promise<string> {
  const child = fork(fileURLToPath(new URL('./sink.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  sink = child;
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the SMTP sink exited (${code}) before listening`)));
    child.on('message', (m: SinkMessage) => {
      if (m.type === 'listening') resolve(`smtp://127.0.0.1:${m.port}`);
    });
  });
}

function askSink(): Promise<SinkStats> {
  return new Promise((resolve) => {
    const onMessage = (m: SinkMessage) => {
      if (m.type !== 'stats') return;
      sink!.off('message', onMessage);
      resolve(m);
    };
    sink!.on('message', onMessage);
    sink!.send('stats');
  });
}

/** CPU time of this process so far, every thread, user + system (ms). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** --plan-lists per-query|per-topic-set: PlanOptions.lists (default: the planner's), to compare the two. */
function planLists(): { lists?: 'per-query' | 'per-topic-set' } {
  const v = o['plan-lists'];
  return v === 'per-query' || v === 'per-topic-set' ? { lists: v } : {};
}
