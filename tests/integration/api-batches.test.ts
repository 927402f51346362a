// The batch API as a script sees it: refused without the bearer token (401) or with an unknown format
// or an empty body (400, naming the fault, nothing stored); stored once (201) and then recognised as
// the same batch (200), each answer in the declared shape. /health answers ok when the database writes.
// On SQLite and on PostgreSQL (the machine API `digest serve` serves with DATABASE_URL stores there).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachEngine } from '../helpers/on-engines.ts';
import { TEST_NOW } from '../helpers/test-app.ts';
import { startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const TOKEN = 'api-token-0123456789abcdef';
const BATCH = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'batches', '2025-11-25.json'), 'utf8');

forEachEngine('POST /api/batches', (engine) => {
  let h: WebHarness;
  beforeAll(async () => {
    h = await startWebHarness({ API_TOKEN: TOKEN }, TEST_NOW, { engine });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  const post = (body: string, opts: { token?: string; query?: string } = {}) =>
    fetch(`${h.base}/api/batches${opts.query ?? ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.token === undefined ? {} : { authorization: `Bearer ${opts.token}` }) },
      body,
    });
  const papers = async () => Number((await h.sql.get<{ n: number | string }>('SELECT count(*) AS n FROM papers'))!.n);

  it('refuses a missing or wrong token, an unknown format and an empty body, storing nothing', async () => {
    const none = await post(BATCH);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({ ok: false, error: 'missing or wrong bearer token' });
    expect((await post(BATCH, { token: 'wrong-token-0123456789' })).status).toBe(401);

    const format = await post(BATCH, { token: TOKEN, query: '?format=csv' });
    expect(format.status).toBe(400);
    expect(await format.json()).toEqual({ ok: false, code: 'BAD_FORMAT', error: 'format: must be one of auto, batch, hf, arxiv' });

    const empty = await post('  ', { token: TOKEN });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { code: string }).code).toBe('BATCH_EMPTY');
    expect(await papers()).toBe(0);
  });

  it('stores a batch once: 201, then 200 for the same content', async () => {
    const first = await post(BATCH, { token: TOKEN });
    expect(first.status).toBe(201);
    const body = (await first.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['batchId', 'date', 'duplicate', 'newPapers', 'ok', 'papers', 'source', 'updatedPapers']);
    expect(body).toMatchObject({ ok: true, source: 'hf-daily', date: '2025-11-25', duplicate: false });
    expect(body.newPapers).toBe(await papers());

    const again = await post(BATCH, { token: TOKEN });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ ok: true, duplicate: true, newPapers: 0 });
  });

  it('GET /health answers ok while the database takes writes', async () => {
    const res = await fetch(`${h.base}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });
});
