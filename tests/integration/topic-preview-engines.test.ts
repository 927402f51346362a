// The topic builder's live preview (GET /api/topics/preview) over a real listening server, on both
// engines: batches are posted through POST /api/batches, so on PostgreSQL they land in PostgreSQL only
// (the SQLite file beside it keeps no papers), and the preview must show them, follow a later batch
// that changes a paper's upvotes, resolve a like: example among them, and answer what SQLite answers
// for the same papers; the confirmation page lists the same recent papers. Its rate limit holds on both.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forEachEngine, type Engine } from '../helpers/on-engines.ts';
import { jsonPost, linkIn, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const TOKEN = 'api-token-0123456789abcdef';
const batch = (day: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'batches', `${day}.json`), 'utf8');
const RATE_LIMIT = 14;
const QUERIES = ['reinforcement learning', 'self-play', 'nash', 'like:2511.10005', 'llm (agents'];
const SPIRAL = 'SPIRAL: Self-Play on Zero-Sum Games Incentivizes Reasoning via Multi-Agent Multi-Turn Reinforcement Learning';

interface Answer {
  ok: boolean;
  total?: number;
  perDay?: number;
  papers?: Array<{ title: string; url: string; titleHtml: string; abstractHtml: string }>;
  error?: string;
  position?: number | null;
}

/** Each engine's answers, step by step: PostgreSQL's must equal SQLite's (SQLite's block runs first). */
const answers: Partial<Record<Engine, Record<string, Answer>>> = {};

forEachEngine('the topic preview', (engine) => {
  let h: WebHarness;
  let asked = 0;
  beforeAll(async () => {
    h = await startWebHarness({ API_TOKEN: TOKEN }, undefined, { engine, web: { previewRateLimit: RATE_LIMIT } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const preview = async (q: string): Promise<Answer> => {
    asked++;
    const res = await fetch(`${h.base}/api/topics/preview?q=${encodeURIComponent(q)}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Answer;
  };
  const post = async (day: string) => {
    const res = await fetch(`${h.base}/api/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: batch(day),
    });
    expect(res.status).toBe(201);
  };
  const keep = (step: string, a: Answer) => ((answers[engine] ??= {})[step] = a);
  const titles = (a: Answer) => a.papers!.map((p) => p.title);

  describe('preview', () => {
    it('shows no papers before any batch', async () => {
      expect(keep('empty', await preview('reinforcement learning'))).toEqual({ ok: true, total: 0, perDay: 0, papers: [] });
    });

    it("shows the posted batch's papers, from the store the batch went to", async () => {
      await post('2025-11-25');
      // On PostgreSQL the batch is there only: a preview read from the SQLite file would show nothing.
      const sqlitePapers = (h.core.db.prepare('SELECT count(*) AS n FROM papers').get() as { n: number }).n;
      expect(sqlitePapers).toBe(engine === 'sqlite' ? 25 : 0);
      const rl = keep('rl', await preview('reinforcement learning'));
      expect(rl.ok).toBe(true);
      expect(rl.total).toBeGreaterThanOrEqual(10);
      expect(rl.papers).toHaveLength(5);
      expect(rl.papers![0]!.titleHtml).toMatch(/<mark>Reinforcement<\/mark> <mark>Learning<\/mark>/i);
      // Most upvoted first: SPIRAL (5), the escaped <script> paper (3), then the others.
      const selfPlay = keep('self-play', await preview('self-play'));
      expect(titles(selfPlay).slice(0, 2)).toEqual([SPIRAL, "<script>alert('x')</script> Self-Play for Safer Agents & Tools"]);
      expect(selfPlay.total).toBe(4);
      expect(keep('nash 1', await preview('nash')).papers![0]!.title).toMatch(/^Iterative Nash Policy Optimization/);
      expect(keep('upvoted 1', await preview('self-play upvotes>=6'))).toMatchObject({ ok: true, total: 0 });
    });

    it("follows a later batch: its new papers, and a known paper's new upvotes", async () => {
      await post('2025-11-26');
      const nash = keep('nash 2', await preview('nash'));
      expect(titles(nash).slice(0, 2).sort()).toEqual(['Accelerating Nash Learning from Human Feedback via Mirror Prox', 'Multiplayer Nash Preference Optimization']);
      // SPIRAL came back with 9 upvotes.
      expect(titles(keep('upvoted 2', await preview('self-play upvotes>=6')))).toEqual([SPIRAL]);
    });

    it('previews a like: topic by a paper of the store, and a syntax error with its position', async () => {
      // Papers like "A Minimaximalist Approach to RL from Human Feedback", one from the later batch; never the example itself.
      const like = keep('like', await preview('like:2511.10005'));
      expect(titles(like).sort()).toEqual([
        'Accelerating Nash Learning from Human Feedback via Mirror Prox',
        'Robust Adversarial Reinforcement Learning via Bounded Rationality Curricula',
        'Towards Robust Offline Reinforcement Learning under Diverse Data Corruption',
      ]);
      const err = keep('error', await preview('llm (agents'));
      expect(err).toMatchObject({ ok: false, position: expect.any(Number) });
    });

    it("lists the topic's recent papers on the page the confirmation link opens", async () => {
      const res = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'reader@example.org', topics: ['self-play upvotes>=6'] }));
      expect(res.status).toBe(202);
      const mail = await h.smtp.waitFor('reader@example.org', 1);
      const page = await (await fetch(h.local(linkIn(mail.text, '/confirm/')))).text();
      expect(page).toContain('Subscription confirmed');
      expect(page).toContain(SPIRAL);
    });

    it.skipIf(engine === 'sqlite')('answers on PostgreSQL exactly what SQLite answers for the same papers', () => {
      expect(answers.postgres).toEqual(answers.sqlite);
      expect(Object.keys(answers.postgres!)).toHaveLength(9);
    });

    it('refuses previews past the rate limit with a JSON 429', async () => {
      while (asked < RATE_LIMIT) await preview(QUERIES[asked % QUERIES.length]!);
      const refused = await fetch(`${h.base}/api/topics/preview?q=self-play`);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ ok: false, code: 'RATE_LIMITED' });
    });
  });
});
