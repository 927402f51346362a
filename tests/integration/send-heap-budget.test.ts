// A sending thread's memory on a population like real readers: thousands of distinct quoted phrases, so
// every paper is matched by dozens of them and its card carries a highlight slot per stretch they hit.
// The thread's heap cap must hold what it keeps with room to spare (GC_HEADROOM), or V8 collects over and
// over long before it runs out: the card cache must count what its cards really take on the heap, and the
// default cap must be sized from that budget. Measured here as bytes held after a full collection, never
// as time. The population is the benchmark's diverse one (bench/corpus.ts), made small.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCorpus, loadAbstracts, seededRandom, zipf } from '../../bench/corpus.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { Links } from '../../src/links.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { createRenderer } from '../../src/render/render.ts';
import { readTemplateSources } from '../../src/render/render-templates.ts';
import { DigestLoader } from '../../src/render/view.ts';
import { GC_HEADROOM, THREAD_BASE_MB, workerCardCacheMb, workerHeapMb } from '../../src/send/send-workers.ts';
import { Tokens } from '../../src/tokens.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { sendPending } from '../../src/send/sender.ts';
import { deliveryEnv, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { seedBatch, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
/** Heap in use after full collections (bytes). */
function liveHeap(): number {
  for (let i = 0; i < 3; i++) collect();
  return process.memoryUsage().heapUsed;
}

const MB = 1024 * 1024;
const PAPERS = 150;
const READERS = 400;

let t: TempDb | undefined;
let e: DeliveryEnv | undefined;
afterEach(async () => {
  t?.cleanup();
  t = undefined;
  await e?.close();
  e = undefined;
});

/** PAPERS papers of the bench corpus; READERS readers with three of its most frequent quoted phrases each. */
async function diverseEdition(db: TempDb['db']) {
  const random = seededRandom(7);
  const corpus = buildCorpus(loadAbstracts(), PAPERS, '2025-11-25', random);
  seedBatch(db, '2025-11-25', corpus.papers.map((p) => ({ key: p.id, title: p.title, abstract: p.abstract, authors: p.authors, upvotes: p.upvotes })));
  const phrases = corpus.diverseTopics;
  const draw = zipf(phrases.length, 0.7, random);
  seedSubscribers(
    db,
    Array.from({ length: READERS }, (_, i) => {
      const chosen = new Set<string>();
      while (chosen.size < 3) chosen.add(phrases[draw()]!.text);
      return { email: `reader${i}@example.com`, topics: [...chosen] };
    }),
  );
  matchPending(db);
  const plan = await planDigests(db, { clock: new ManualClock('2025-11-25T12:00:00Z'), mode: 'now' });
  return { plan, phrases: phrases.length };
}

describe("a sending thread's heap on readers with thousands of distinct phrases", () => {
  it('the card cache counts what its cards hold on the heap, and the default cap holds cache and thread twice over', async () => {
    t = tempDatabase('heap-budget-');
    const { plan, phrases } = await diverseEdition(t.db);
    expect(plan.planned).toBe(READERS);
    expect(phrases).toBeGreaterThan(1_000); // a diverse population: far more phrases than readers share

    // A worker of a run at default settings: its cache budget and its heap cap.
    const config = loadConfig({ SECRET_KEY: 'x'.repeat(40), LOG_LEVEL: 'silent' });
    const cacheMb = workerCardCacheMb(config);
    expect(cacheMb).toBe(config.RENDER_CACHE_MB);
    expect(workerHeapMb(config)).toBeGreaterThanOrEqual(GC_HEADROOM * (THREAD_BASE_MB + cacheMb));

    const links = new Links('https://digest.example.org', new Tokens('s'.repeat(40)), new ManualClock('2025-11-25T12:00:00Z'));
    const ids = (t.db.prepare('SELECT id FROM digests ORDER BY id').all() as { id: number }[]).map((r) => r.id);
    // What a worker gets: the templates as compiled sources (no MJML in the thread). One renderer warms up
    // the code and the modules' memos on one digest; a second one, made after the measurement starts, renders all.
    const sources = await readTemplateSources();
    const warm = await createRenderer({ sources, cardCacheBytes: cacheMb * MB });
    warm.digest(new DigestLoader(t.db, links).load(ids[0]!, { papers: warm.emailPapers })!.view).release?.();
    const before = liveHeap();
    const renderer = await createRenderer({ sources, cardCacheBytes: cacheMb * MB });
    const loader = new DigestLoader(t.db, links);
    for (const id of ids) {
      const loaded = loader.load(id, { papers: renderer.emailPapers })!;
      renderer.digest(loaded.view).release?.();
    }
    const held = liveHeap() - before;
    const cache = renderer.cacheStats!();

    // Every card of the day fits: built once each, never evicted and rebuilt.
    expect(cache.misses).toBe(cache.entries);
    expect(cache.entries).toBeGreaterThan(PAPERS * 0.9);
    // What rendering left on the heap (the cards, the highlighters, the loader's papers, the templates
    // compiled) is what the cache counts plus a little: the budget is not an underestimate. (Before, a
    // card of ~50 phrases counted ~8 KB and held ~75 KB: its pieces pinned Node's 8 KB pool slabs, and
    // every phrase's highlighter kept its own memo of the words it had seen.)
    expect(held).toBeLessThan(cache.bytes + 0.25 * THREAD_BASE_MB * MB);
    // And it is within what the cap is sized for, twice over.
    expect(GC_HEADROOM * (held + THREAD_BASE_MB * MB)).toBeLessThanOrEqual(workerHeapMb(config) * MB);
    expect(loader).toBeDefined(); // kept alive through the measurement
  });

  it('worker threads send it under the cap sized for them, each reporting its time in GC', { timeout: 120_000 }, async () => {
    e = await deliveryEnv({ env: { SEND_WORKERS: '2', SMTP_POOL_SIZE: '4' } });
    const { plan } = await diverseEdition(e.t.db);
    const sink = e.sink;
    const summary = await sendPending({ ...e.deps, smtpUrl: async () => sink.url }, { parallelMinRows: 0 });

    expect(summary).toMatchObject({ sent: plan.planned, failed: 0, unknown: 0, threads: 2 });
    expect(summary.sentPerThread).toHaveLength(2); // no thread died of its cap
    expect(summary.gc?.map((g) => g.thread).sort()).toEqual([1, 2]);
    for (const g of summary.gc!) {
      expect(g.wallMs).toBeGreaterThan(0);
      expect(g.gcMs).toBeLessThanOrEqual(g.wallMs);
      // V8's limit is the old generation's cap plus the young generation: at least the cap sized for it.
      expect(g.heapLimitMb).toBeGreaterThanOrEqual(workerHeapMb(e.config));
    }
  });

  it('a cap set lower than the default shrinks the card cache to what it can hold', () => {
    const small = loadConfig({ SECRET_KEY: 'x'.repeat(40), SEND_WORKER_HEAP_MB: '96' });
    expect(workerHeapMb(small)).toBe(96);
    const cacheMb = workerCardCacheMb(small);
    expect(cacheMb).toBeLessThan(small.RENDER_CACHE_MB);
    expect(GC_HEADROOM * (THREAD_BASE_MB + cacheMb)).toBeLessThanOrEqual(96);
  });
});
