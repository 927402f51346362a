// Issue 13, the story told only through the links in real emails (real SMTP server + postal-mime,
// real web server, real SQLite file; only the clock is fake). Over three days a reader clicks "more
// like this" on the game-playing papers of their digest and "less like this" on the LLM-training ones;
// on the fourth day at least 8 of the top 10 papers of their email are game papers. Forged links are
// refused, "less" offers to mute, following an author adds a topic, and the Atom feed parses.
import { readFileSync } from 'node:fs';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { runPipeline } from '../../src/pipeline.ts';
import { startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

interface SamplePaper {
  id: string;
  title: string;
  abstract: string;
  url: string;
}
const sample = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: SamplePaper[];
};
const GAMES = /\b(games?|gameplay|poker|chess|starcraft|pok[eé]mon)\b/i;
const LLM = /\b(LLMs?|large language models?|RLHF)\b/i;
const theme = (p: SamplePaper): 'game' | 'llm' | 'other' =>
  GAMES.test(`${p.title} ${p.abstract}`) ? 'game' : LLM.test(`${p.title} ${p.abstract}`) ? 'llm' : 'other';
const themeOfTitle = new Map(sample.papers.map((p) => [p.title, theme(p)]));

const READER = 'reader@example.org';
const DAYS = ['2025-11-25', '2025-11-26', '2025-11-27', '2025-11-28'];
/** Days 1-3: 12 papers each; day 4: the other 35. */
const slices = [sample.papers.slice(0, 12), sample.papers.slice(12, 24), sample.papers.slice(24, 36), sample.papers.slice(36)];

let h: WebHarness;

/** The papers of an email's text part, in order, with their links. */
function papersOf(text: string): Array<{ title: string; more?: string; less?: string; follow?: string }> {
  const blocks = text.split(/\n(?=\d+\. )/).filter((b) => /^\d+\. /.test(b));
  return blocks.map((b) => ({
    title: /^\d+\. (.*)$/m.exec(b)![1]!.trim(),
    more: /More like this: (\S+)/.exec(b)?.[1],
    less: /Less like this: (\S+)/.exec(b)?.[1],
    follow: /Follow [^:]+: (\S+)/.exec(b)?.[1],
  }));
}

/** Opens a link from an email (GET: a page with one button), then submits that button's form. */
async function click(url: string): Promise<string> {
  const page = await fetch(h.local(url));
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!.replaceAll('&#x2F;', '/').replaceAll('&amp;', '&');
  const done = await fetch(`${h.base}${action}`, { method: 'POST' });
  expect(done.status).toBe(200);
  return done.text();
}

async function deliverDay(day: number): Promise<string> {
  h.clock.set(`${DAYS[day]}T09:00:00Z`);
  const papers = slices[day]!.map((p) => ({ ...p, authors: ['Mira Okafor', 'Tomás Lindqvist'] }));
  ingestBatch(h.core.db, readBatchFile({ source: 'hf-daily', date: DAYS[day], papers }), h.clock);
  await runPipeline(h.core, { mode: 'now' });
  const mail = await h.smtp.waitFor(READER, day + 1);
  return mail.text;
}

beforeAll(async () => {
  h = await startWebHarness();
  // One broad topic: every paper matches it once, so only the reader's feedback can reorder them.
  await h.subscribers.subscribe({ email: READER, topics: ['learning OR model OR agent OR policy'] }, { confirmed: true });
  await h.subscribers.subscribe({ email: 'other@example.org', topics: ['learning'] }, { confirmed: true });
});
afterAll(async () => {
  await h.close();
});

describe('a reader teaches their digest from the email', () => {
  let lastText = '';

  it('three days of "more like this" on game papers and "less like this" on LLM papers', async () => {
    for (let day = 0; day < 3; day++) {
      const text = await deliverDay(day);
      const listed = papersOf(text);
      expect(listed.length).toBeGreaterThan(5);
      for (const p of listed) {
        const t = themeOfTitle.get(p.title);
        if (t === 'game') expect(await click(p.more!)).toContain('Recorded: more papers like');
        if (t === 'llm') expect(await click(p.less!)).toContain('Recorded: fewer papers like');
      }
    }
    const votes = h.core.db.prepare('SELECT vote, count(*) AS n FROM feedback GROUP BY vote ORDER BY vote').all();
    expect(votes).toEqual([
      { vote: -1, n: expect.any(Number) },
      { vote: 1, n: expect.any(Number) },
    ]);
  });

  it('on day 4 at least 8 of the top 10 papers are of the liked theme', async () => {
    lastText = await deliverDay(3);
    const listed = papersOf(lastText);
    const games = listed.filter((p) => themeOfTitle.get(p.title) === 'game').length;
    expect(games).toBeGreaterThanOrEqual(10); // "when 10 such papers exist"
    const top = listed.slice(0, 10).map((p) => themeOfTitle.get(p.title));
    expect(top.filter((t) => t === 'game').length).toBeGreaterThanOrEqual(8);
  });

  it('refuses a forged link, a link edited to name another paper, and another purpose (403)', async () => {
    const p = papersOf(lastText)[0]!;
    const more = new URL(p.more!);
    const [, , token, paperId] = more.pathname.split('/');
    const forged = `${token!.slice(0, -4)}AAAA`;
    expect((await fetch(`${h.base}/feedback/${forged}/${paperId}/more`, { method: 'POST' })).status).toBe(403);
    expect((await fetch(`${h.base}/feedback/${token}/${Number(paperId) + 1}/more`, { method: 'POST' })).status).toBe(403);
    const reader = h.core.db.prepare('SELECT id, token_salt AS tokenSalt FROM subscribers WHERE email = ?').get(READER) as {
      id: number;
      tokenSalt: string;
    };
    const other = h.core.db.prepare('SELECT id, token_salt AS tokenSalt FROM subscribers WHERE email = ?').get('other@example.org') as {
      id: number;
      tokenSalt: string;
    };
    // The other subscriber's token with the reader's id put in front: the signature does not hold.
    const theirs = h.links.paperToken(other, Number(paperId));
    const swapped = theirs.replace(/^\d+\./, `${reader.id}.`);
    expect((await fetch(`${h.base}/feedback/${swapped}/${paperId}/less`, { method: 'POST' })).status).toBe(403);
    const manage = h.tokens.sign(reader, 'manage');
    expect((await fetch(`${h.base}/feedback/${manage}/${paperId}/less`)).status).toBe(403);
  });

  it('"less like this" offers to mute the topic that brought the paper', async () => {
    const p = papersOf(lastText).find((x) => themeOfTitle.get(x.title) === 'llm') ?? papersOf(lastText).at(-1)!;
    const page = await click(p.less!);
    expect(page).toContain('Mute this topic');
    expect(page).toContain('learning OR model OR agent OR policy');
  });

  it('following an author from the email adds an author: topic after a confirmation page', async () => {
    const p = papersOf(lastText)[0]!;
    const page = await click(p.follow!);
    expect(page).toContain('author:&quot;Mira Okafor&quot;');
    const topics = h.core.db
      .prepare('SELECT t.text FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE s.email = ? ORDER BY t.position')
      .all(READER);
    expect(topics).toEqual([{ text: 'learning OR model OR agent OR policy' }, { text: 'author:"Mira Okafor"' }]);
  });

  it('serves a valid Atom feed of the matched papers at the URL shown on the preferences page', async () => {
    const prefsLink = /Manage preferences: (\S+)/.exec(lastText)![1]!;
    const prefs = await (await fetch(h.local(prefsLink))).text();
    const feedUrl = /href="([^"]+)" data-feed-url/.exec(prefs)![1]!.replaceAll('&#x2F;', '/');
    const res = await fetch(h.local(feedUrl));
    expect(res.headers.get('content-type')).toMatch(/^application\/atom\+xml/);
    const xml = await res.text();
    expect(XMLValidator.validate(xml)).toBe(true);
    const feed = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => name === 'entry' }).parse(xml).feed;
    expect(feed['@_xmlns']).toBe('http://www.w3.org/2005/Atom');
    expect(feed.entry.length).toBeGreaterThanOrEqual(60);
    expect(feed.entry.every((e: { id: string; title: string; updated: string }) => e.id && e.title && !Number.isNaN(Date.parse(e.updated)))).toBe(true);
    const bad = feedUrl.replace(/.{4}$/, 'AAAA');
    expect((await fetch(h.local(bad))).status).toBe(403);
  });
});
