// Feed text is clean text: control characters a feed or a posted batch carries (NUL, ESC sequences, CR,
// DEL, ...) are removed at ingest, so they reach neither the database, nor the email a reader gets over
// SMTP, nor its web view. MAIL_FROM with a line break stops every command at start-up, naming it.
// The feed story on both engines (tests/engines.ts): on PostgreSQL the batch is posted into the harness's
// schema, and `digest run`'s tick sends from there; MAIL_FROM is read before any store opens: run once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli.ts';
import { sendDueInProcess } from '../helpers/engine-tick.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { linkIn, startWebHarness, subscribeAndConfirm, type WebHarness } from '../helpers/web-harness.ts';

const TOKEN = 'api-token-0123456789abcdef';
/** Every C0 control but tab and newline, and DEL. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/;

const BATCH = {
  source: 'hf-daily\u0007',
  date: '2025-11-25',
  papers: [
    {
      id: '2511.07777',
      title: 'Zebra\u0000 routing \u001b[31mfor\u001b[0m mixture of experts\r',
      abstract: 'Sparse\u0008 mixture of experts\u007f layers,\u0001 routed by zebras.\u000c',
      authors: ['Ada\u001b]8;;https://evil.example\u0007 Lovelace', 'Bob\u0000 Smith'],
      url: 'https://arxiv.org/abs/2511.07777',
      publishedAt: '2025-11-24',
      upvotes: 3,
      categories: ['cs.LG\u0003'],
    },
  ],
};

forEachEngine('control characters from a feed', (engine) => {
  let h: WebHarness;
  beforeAll(async () => {
    h = await startWebHarness({ API_TOKEN: TOKEN }, undefined, { engine });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('never reach the database, the email or the web view', async () => {
    const posted = await fetch(`${h.base}/api/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(BATCH),
    });
    expect(posted.status).toBe(201);
    const row = (await h.sql.get<Record<string, string>>(`SELECT paper_key, title, abstract, authors, categories FROM papers WHERE paper_key = '2511.07777'`))!;
    expect(row.title).toBe('Zebra routing [31mfor[0m mixture of experts');
    for (const v of Object.values(row)) expect(v).not.toMatch(CONTROLS);
    expect(JSON.parse(row.authors!)).toEqual(['Ada]8;;https://evil.example Lovelace', 'Bob Smith']);
    const batch = (await h.sql.get<{ source: string }>('SELECT source FROM batches'))!;
    expect(batch.source).toBe('hf-daily');

    await subscribeAndConfirm(h, 'reader@example.org', ['zebra']);
    expect(await sendDueInProcess(h)).toBe(1);
    const mail = await h.smtp.waitFor('reader@example.org', 2);
    expect(mail.text).toContain('Zebra routing');
    expect(mail.text).not.toMatch(CONTROLS);
    expect(mail.html).not.toMatch(CONTROLS);
    const view = await (await fetch(h.local(linkIn(mail.text, '/digests/')))).text();
    expect(view).toContain('routing');
    expect(view).not.toMatch(CONTROLS);
  });
});

describe('MAIL_FROM', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  it('with a CR or LF stops start-up naming the variable', async () => {
    for (const from of ['Digest <d@example.org>\r\nBcc: victim@example.org', 'Digest <d@example.org>\nX: y']) {
      Object.assign(process.env, { SOURCES: '', DATABASE_PATH: ':memory:', MAIL_FROM: from });
      const err: string[] = [];
      const io: CliIo = { out: () => undefined, err: (l) => err.push(l), isTTY: false };
      expect(await runCli(['node', 'digest', 'status'], io)).toBe(1);
      expect(err.join('\n')).toMatch(/MAIL_FROM: must be one line: it contains a line break \(CR or LF\)/);
    }
  });
});
