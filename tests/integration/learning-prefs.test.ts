// The reader's side of the learning preferences: why the last slot sent nothing (page and
// `digest status <email>`), their own cap on papers per email, "you may also like" papers learned from
// a "more like this" click, and the topic builder's papers-a-day figure. Real SMTP and HTTP, on both
// engines: a SQLite file, or one PostgreSQL schema for the file (migrated once) that the web, the ingest,
// `digest run`'s tick and `digest status` act on, as `digest serve` and `digest run` do with DATABASE_URL.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscriberStatusPg } from '../../src/cli/commands/status-postgres.ts';
import { cmdSubscriberStatus, sqliteSubscriberStatus } from '../../src/cli-commands.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import type { SubscribeInput } from '../../src/subscribers/types.ts';
import { runTick } from '../helpers/engine-tick.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { TEST_NOW } from '../helpers/test-app.ts';
import { formPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const sample = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ id: string; title: string; abstract: string; url: string }>;
};

/** SQLite's papers-a-day figure (its block runs first): PostgreSQL's, over the same papers, must equal it. */
let sqlitePerDay: number | undefined;

forEachEngine('learning preferences', (engine) => {
  let h: WebHarness;
  const prefsUrl = async (email: string): Promise<string> => {
    const s = (await h.sql.get<{ id: number; tokenSalt: string }>('SELECT id, token_salt AS "tokenSalt" FROM subscribers WHERE email = ?', email))!;
    return h.local(h.links.preferences({ id: Number(s.id), tokenSalt: s.tokenSalt }));
  };
  const page = async (url: string): Promise<string> => (await fetch(url)).text();
  /** Subscribes through the door the web serves (the engine's store), as the subscribe form does. */
  const subscribe = async (input: SubscribeInput) => {
    await h.door.prepareExamples(input.topics);
    await h.door.subscribe(input, { confirmed: true });
  };

  async function day(date: string, papers: typeof sample.papers): Promise<void> {
    h.clock.set(`${date}T09:00:00Z`);
    const batch = readBatchFile({ source: 'hf-daily', date, papers });
    if (h.pgPool) await ingestBatchPg(h.pgPool, batch, h.clock);
    else ingestBatch(h.core.db, batch, h.clock);
    await runTick(h.core, { pool: h.pgPool, pg: h.pg }, 'now');
  }

  beforeAll(async () => {
    h = await startWebHarness({}, TEST_NOW, { engine });
    await subscribe({ email: 'quiet@example.org', topics: ['zebra'] });
    await subscribe({ email: 'capped@example.org', topics: ['learning'] });
    await subscribe({ email: 'narrow@example.org', topics: ['poker OR chess'] });
    const capped = await fetch(await prefsUrl('capped@example.org'), formPost([['topics', 'learning'], ['maxPapers', '3'], ['learning', '1']]));
    expect(capped.status).toBe(303);
    await day('2025-11-25', sample.papers.slice(0, 36));
    // Subscribes by example: CRAFT-GUI (a GUI-agent paper of day 1).
    await subscribe({ email: 'example@example.org', topics: ['like:2511.02915'] });
  }, 60_000); // a tick of 36 papers: slow when the machine's two cores are shared
  afterAll(async () => {
    await h?.close();
  });

  describe('why no email', () => {
    it('the preferences page and `digest status <email>` say that no topic matched the papers of the day', async () => {
      expect(h.smtp.to('quiet@example.org')).toHaveLength(0);
      const want = 'No email on 25 Nov: your topic matched none of the 36 papers of 25 Nov.';
      expect(await page(await prefsUrl('quiet@example.org'))).toContain(want);
      const lines: string[] = [];
      const source = h.pgPool ? await subscriberStatusPg(h.pgPool, h.clock) : sqliteSubscriberStatus(h.core);
      expect(await cmdSubscriberStatus(source, { out: (l) => lines.push(l), err: () => {}, isTTY: false }, 'quiet@example.org')).toBe(0);
      expect(lines).toEqual([`quiet@example.org\tconfirmed\tlast slot 2025-11-25\tnothing sent`, want]);
    });

    it('says when deliveries are paused', async () => {
      const r = await fetch(await prefsUrl('quiet@example.org'), formPost([['topics', 'zebra'], ['pauseDays', '3']]));
      expect(r.status).toBe(303);
      expect(await page(await prefsUrl('quiet@example.org'))).toContain('Deliveries are paused until 2025-11-28 09:00 UTC.');
    });
  });

  describe("a reader's own cap", () => {
    it('lists at most the chosen number of papers, the rest behind the web link', async () => {
      const mail = await h.smtp.waitFor('capped@example.org');
      expect(mail.text.match(/^\d+\. /gm)).toHaveLength(3);
      expect(mail.text).toMatch(/\d+ more papers in this digest/);
      expect(await page(await prefsUrl('capped@example.org'))).toContain('value="3"');
    });
  });

  describe('you may also like', () => {
    it('after "more like this" on a poker paper, the next email adds up to three labelled game papers no topic matched', async () => {
      const first = await h.smtp.waitFor('narrow@example.org');
      const more = /More like this: (\S+)/.exec(first.text.slice(first.text.indexOf('PokerGPT')))![1]!;
      const form = await page(h.local(more));
      const action = /<form method="post" action="([^"]+)"/.exec(form)![1]!.replaceAll('&#x2F;', '/');
      expect((await fetch(`${h.base}${action}`, { method: 'POST' })).status).toBe(200);

      await day('2025-11-26', sample.papers.slice(36));
      const second = await h.smtp.waitFor('narrow@example.org', 2);
      const at = second.text.indexOf('You may also like');
      expect(at).toBeGreaterThan(0);
      const suggested = second.text.slice(at).split('\n').filter((l) => l.startsWith(' * '));
      expect(suggested.length).toBeGreaterThanOrEqual(1);
      expect(suggested.length).toBeLessThanOrEqual(3);
      for (const line of suggested) expect(line).not.toMatch(/poker|chess/i); // no topic of theirs matched them
      expect(second.html).toContain('You may also like');

      // A suggestion's feedback link carries the digest's token, like the listed papers', and works.
      const less = /Less like this: (\S+)/.exec(second.text.slice(at))![1]!;
      // (The web view link has a read-only token of its own: compared with a listed paper's link instead.)
      const listed = /Less like this: (\S+)/.exec(second.text)![1]!;
      expect(listed).not.toBe(less);
      expect(new URL(less).pathname.split('/')[2]).toBe(new URL(listed).pathname.split('/')[2]);
      const lessForm = await page(h.local(less));
      const lessAction = /<form method="post" action="([^"]+)"/.exec(lessForm)![1]!.replaceAll('&#x2F;', '/');
      const voted = await fetch(`${h.base}${lessAction}`, { method: 'POST' });
      expect(voted.status).toBe(200);
      expect(await voted.text()).toContain('Recorded: fewer papers like');
    });

    it('a like: reader gets the papers on the same problem, the shared terms highlighted', async () => {
      const mail = await h.smtp.waitFor('example@example.org', 1);
      const titles = mail.text.match(/^\d+\. .*$/gm)!;
      expect(titles.some((t) => t.includes('ARPO:End-to-End Policy Optimization for GUI Agents'))).toBe(true);
      expect(titles.length).toBeLessThanOrEqual(5);
      expect(mail.html).toMatch(/<span class="pd-hl"[^>]*>GUI<\/span>/);
      // Named as the reader would, not as query syntax.
      expect(mail.text).toContain('Matched: papers like 2511.02915');
    });

    it('can be turned off', async () => {
      const r = await fetch(await prefsUrl('narrow@example.org'), formPost([['topics', 'poker OR chess'], ['learning', '1']]));
      expect(r.status).toBe(303);
      expect(await h.sql.get("SELECT suggestions FROM subscribers WHERE email = 'narrow@example.org'")).toEqual({ suggestions: 0 });
    });
  });

  describe('volume before subscribing', () => {
    it('the topic builder says how many papers a day the topic would have brought over 30 days', async () => {
      const r = (await (await fetch(`${h.base}/api/topics/preview?q=learning`)).json()) as { ok: boolean; total: number; perDay: number };
      expect(r.ok).toBe(true);
      if (engine === 'sqlite') {
        // SQLite's own full-text index counts the papers; PostgreSQL, over the same papers, answers the same.
        const all = h.core.db.prepare(`SELECT count(*) AS n FROM papers_fts WHERE papers_fts MATCH '{title abstract} : "learning"'`).get() as { n: number };
        expect(all.n).toBeGreaterThan(0);
        sqlitePerDay = Math.round((all.n / 30) * 10) / 10;
      }
      expect(sqlitePerDay).toBeDefined();
      expect(r.perDay).toBe(sqlitePerDay);
    });
  });
});
