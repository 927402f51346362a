// Feedback and reader models, the story told only through the links in real emails (real SMTP server + postal-mime,
// real web server, a real store; only the clock is fake). Over three days a reader clicks "more
// like this" on the game-playing papers of their digest and "less like this" on the LLM-training ones;
// on the fourth day at least 8 of the top 10 papers of their email are game papers. Forged links are
// refused, "less" offers to mute, following an author adds a topic, and the Atom feed parses. Every
// feedback link of an email carries the digest's one token (its web view link has a read-only one); links of older
// emails, one token per paper, keep working; a digest pruned by retention answers 410.
// On both engines: a SQLite file, or one PostgreSQL schema (migrated once) where the readers subscribe, the
// batches are ingested, `digest run`'s tick plans and sends, and the served links and feed read and write.
// (The relevance study of many readers: feedback-relevance.test.ts.)
import { readFileSync } from 'node:fs';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { digestsOn, ingestOn, pruneOn, subjectOn, subscribeOn, tickOn } from '../helpers/engine-harness-ops.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { TEST_NOW } from '../helpers/test-app.ts';
import { startWebHarness, topicsOn, type WebHarness } from '../helpers/web-harness.ts';

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

const subject = (email: string) => subjectOn(h, email);
/** A subscriber's digests, oldest first, with the papers each listed. */
const digestsOf = (email: string) => digestsOn(h, email);

/** The token and paper id of a /feedback/<token>/<paperId>/<direction> or /follow/<token>/<i>/<paperId> link. */
function linkParts(url: string): { token: string; paperId: number } {
  const parts = new URL(url).pathname.split('/');
  return { token: parts[2]!, paperId: Number(parts[1] === 'follow' ? parts[4] : parts[3]) };
}

/** The JSON answer (status, code, error) of a POST to a feedback path. */
async function postJson(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${h.base}${path}`, { method: 'POST', headers: { accept: 'application/json' } });
  return { status: res.status, body: await res.json() };
}

async function deliverDay(day: number): Promise<string> {
  h.clock.set(`${DAYS[day]}T09:00:00Z`);
  const papers = slices[day]!.map((p) => ({ ...p, authors: ['Mira Okafor', 'Tomás Lindqvist'] }));
  await ingestOn(h, readBatchFile({ source: 'hf-daily', date: DAYS[day], papers }));
  await tickOn(h);
  const mail = await h.smtp.waitFor(READER, day + 1);
  return mail.text;
}

/** The feedback table's votes, as numbers on both engines (PostgreSQL's count and sum are bigint). */
const votesByKind = () => h.sql.all<{ vote: number; n: number }>('SELECT vote, CAST(count(*) AS INTEGER) AS n FROM feedback GROUP BY vote ORDER BY vote');
const voteTotals = () =>
  h.sql.get<{ n: number; sum: number | null }>('SELECT CAST(count(*) AS INTEGER) AS n, CAST(sum(vote) AS INTEGER) AS sum FROM feedback');
const voteOf = (subscriberId: number, paperId: number) =>
  h.sql.get<{ vote: number }>('SELECT vote FROM feedback WHERE subscriber_id = ? AND paper_id = ?', subscriberId, paperId);
const mutedOf = (email: string) =>
  h.sql.all<{ muted: number }>('SELECT t.muted FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE s.email = ?', email);

forEachEngine('feedback from the email', (engine) => {
  beforeAll(async () => {
    h = await startWebHarness({}, TEST_NOW, { engine });
    // One broad topic: every paper matches it once, so only the reader's feedback can reorder them.
    await subscribeOn(h, { email: READER, topics: ['learning OR model OR agent OR policy'] });
    await subscribeOn(h, { email: 'other@example.org', topics: ['learning'] });
  });
  afterAll(async () => {
    await h?.close();
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
      expect(await votesByKind()).toEqual([
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

    it("every feedback and follow link of an email carries the digest's one token; its web view link a read-only one", async () => {
      const links = papersOf(lastText).flatMap((p) => [p.more, p.less, p.follow].filter((l): l is string => l !== undefined));
      expect(links.length).toBeGreaterThan(30);
      const tokens = new Set(links.map((l) => linkParts(l).token));
      expect(tokens.size).toBe(1);
      const [token] = [...tokens] as [string];
      const day4 = (await digestsOf(READER)).at(-1)!;
      expect(h.tokens.peek(token)?.purpose).toBe(`view:${day4.id}`);
      // The web view link may be shared: its token only reads that digest.
      const webView = /View in your browser: (\S+)/.exec(lastText)![1]!;
      const readToken = new URL(webView).pathname.split('/')[2]!;
      expect(h.tokens.peek(readToken)?.purpose).toBe(`read:${day4.id}`);
      // The compact form (src/tokens.ts): half the length of the long one, in every signed link of the email.
      expect(token).toMatch(/^[0-9a-z]+\.v[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
      const signed = [...lastText.matchAll(/https?:\/\/\S+\/(?:mute|preferences|unsubscribe|digests)\/(\S+)/g)].map((m) => m[1]!);
      expect(signed.length).toBeGreaterThan(3);
      for (const t of signed) expect(t).toMatch(/^[0-9a-z]+\.(m|t[0-9a-z]+|r[0-9a-z]+)\.[A-Za-z0-9_-]{22}$/);
      // The URL shapes are as before: only the token changed.
      const first = papersOf(lastText)[0]!;
      expect(new URL(first.more!).pathname).toMatch(new RegExp(`^/feedback/${token}/\\d+/more$`));
      expect(new URL(first.follow!).pathname).toMatch(new RegExp(`^/follow/${token}/0/\\d+$`));
    });

    it('refuses a forged link, a paper not in the digest, another subscriber\'s digest, and another purpose (403, all alike)', async () => {
      const p = papersOf(lastText)[0]!;
      const { token, paperId } = linkParts(p.more!);
      const forged = `${token.slice(0, -4)}AAAA`;
      const votesBefore = await voteTotals();
      const refused = await postJson(`/feedback/${forged}/${paperId}/more`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ ok: false, code: 'LINK_INVALID' });

      const reader = await subject(READER);
      const other = await subject('other@example.org');
      const [day1, , , day4] = await digestsOf(READER);
      // A paper the reader was sent, but in another digest than the token's.
      const elsewhere = day1!.papers.find((id) => !day4!.papers.includes(id))!;
      expect(elsewhere).toBeDefined();
      expect(await postJson(`/feedback/${token}/${elsewhere}/more`)).toEqual(refused);
      expect(await postJson(`/follow/${token}/0/${elsewhere}`)).toEqual(refused);
      // A paper no digest listed.
      const unknown = Math.max(...day4!.papers) + 1000;
      expect(await postJson(`/feedback/${token}/${unknown}/less`)).toEqual(refused);

      // A token signed for the reader naming the other subscriber's digest, with a paper of that digest.
      const theirs = (await digestsOf('other@example.org')).at(-1)!;
      expect(theirs.papers.length).toBeGreaterThan(0);
      const naming = h.tokens.sign(reader, `view:${theirs.id}`);
      expect(await postJson(`/feedback/${naming}/${theirs.papers[0]}/more`)).toEqual(refused);
      // The other subscriber's own digest token with the reader's id put in front: the signature does not hold.
      const swapped = h.links.digestToken(other, theirs.id).replace(/^[0-9a-z]+\./, `${reader.id.toString(36)}.`);
      expect(swapped).not.toBe(h.links.digestToken(other, theirs.id));
      expect(await postJson(`/feedback/${swapped}/${theirs.papers[0]}/less`)).toEqual(refused);
      // The reader's own manage token is for another purpose.
      expect((await fetch(`${h.base}/feedback/${h.tokens.sign(reader, 'manage')}/${paperId}/less`)).status).toBe(403);
      // The refused clicks recorded nothing.
      expect(await voteTotals()).toEqual(votesBefore);
    });

    it('a link from an email sent before the compact tokens (long form, the digest\'s own token) still works', async () => {
      const reader = await subject(READER);
      const day4 = (await digestsOf(READER)).at(-1)!;
      const long = h.tokens.signLong(reader, `view:${day4.id}`);
      expect(long).toMatch(/^\d+\.view-\d+\.0\.[A-Za-z0-9_-]{43}$/);
      expect((await fetch(`${h.base}/digests/${long}`)).status).toBe(200);
      expect((await fetch(`${h.base}/feedback/${long}/${day4.papers[3]}/more`)).status).toBe(200);
      expect((await fetch(`${h.base}/preferences/${h.tokens.signLong(reader, 'manage')}`)).status).toBe(200);
      // Edited to another subscriber's id, it is refused as a compact one is.
      const other = await subject('other@example.org');
      expect((await fetch(`${h.base}/digests/${long.replace(/^\d+\./, `${other.id}.`)}`)).status).toBe(403);
    });

    it('a link from an older email (one token per paper) still works, and still names its paper only', async () => {
      const reader = await subject(READER);
      const day4 = (await digestsOf(READER)).at(-1)!;
      const paperId = day4.papers[1]!;
      const old = h.tokens.sign(reader, `paper:${paperId}`);
      const page = await fetch(`${h.base}/feedback/${old}/${paperId}/less`);
      expect(page.status).toBe(200);
      expect(await click(`${h.base}/feedback/${old}/${paperId}/more`)).toContain('Recorded: more papers like');
      expect(await voteOf(reader.id, paperId)).toEqual({ vote: 1 });
      // Edited to name another paper, even one of the same digest: refused as before.
      expect((await fetch(`${h.base}/feedback/${old}/${day4.papers[2]}/more`, { method: 'POST' })).status).toBe(403);
    });

    it("accepts a paper the digest suggested (\"you may also like\") with the digest's token", async () => {
      const reader = await subject(READER);
      const [day1, , , day4] = await digestsOf(READER);
      const suggested = day1!.papers.filter((id) => !day4!.papers.includes(id)).at(-1)!;
      await h.sql.run('INSERT INTO digest_suggestions (digest_id, paper_id, score) VALUES (?, ?, 1)', day4!.id, suggested);
      const token = h.links.digestToken(reader, day4!.id);
      expect(await click(`${h.base}/feedback/${token}/${suggested}/less`)).toContain('Recorded: fewer papers like');
      expect(await voteOf(reader.id, suggested)).toEqual({ vote: -1 });
      expect((await fetch(`${h.base}/follow/${token}/1/${suggested}`)).status).toBe(200);
    });

    it('"less like this" offers to mute the topic that brought the paper', async () => {
      const p = papersOf(lastText).find((x) => themeOfTitle.get(x.title) === 'llm') ?? papersOf(lastText).at(-1)!;
      const page = await click(p.less!);
      expect(page).toContain('Mute this topic');
      expect(page).toContain('learning OR model OR agent OR policy');
      // The offer is the subscriber's mute link (manage token and topic id): it opens the mute page for that
      // topic, which changes nothing until its button is pressed.
      const offer = /<a href="([^"]+)">Mute this topic<\/a>/.exec(page)![1]!.replaceAll('&#x2F;', '/');
      expect(new URL(offer).pathname).toMatch(/^\/mute\/[0-9a-z]+\.m\.[A-Za-z0-9_-]{22}\/\d+$/);
      const mutePage = await fetch(h.local(offer));
      expect(mutePage.status).toBe(200);
      const muteHtml = await mutePage.text();
      expect(muteHtml).toContain('learning OR model OR agent OR policy');
      expect(muteHtml).toContain('<form method="post"');
      expect(await mutedOf(READER)).toEqual([{ muted: 0 }]);
    });

    it('following an author from the email adds an author: topic after a confirmation page', async () => {
      const p = papersOf(lastText)[0]!;
      const page = await click(p.follow!);
      expect(page).toContain('author:&quot;Mira Okafor&quot;');
      expect(await topicsOn(h, READER)).toEqual(['learning OR model OR agent OR policy', 'author:"Mira Okafor"']);
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

    it('"only the papers my model rates well" (a preference) keeps the liked theme and leaves the rest out', async () => {
      const reader = await subject(READER);
      const saved = await fetch(`${h.base}/preferences/${h.tokens.sign(reader, 'manage')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ modelOnly: true }),
      });
      expect(saved.status).toBe(200);
      expect(((await saved.json()) as { preferences: { modelOnly: boolean } }).preferences.modelOnly).toBe(true);
      // A fifth day: the fourth day's papers again, as new papers (new ids), so both themes are there.
      h.clock.set('2025-11-29T09:00:00Z');
      const papers = slices[3]!.map((p, i) => ({ ...p, id: `2512.${String(20000 + i)}`, url: `${p.url}#again`, authors: ['Mira Okafor', 'Tomás Lindqvist'] }));
      await ingestOn(h, readBatchFile({ source: 'hf-daily', date: '2025-11-29', papers }));
      await tickOn(h);
      const listed = papersOf((await h.smtp.waitFor(READER, 5)).text);
      const games = papers.filter((p) => theme(p) === 'game').length;
      const kept = listed.map((p) => themeOfTitle.get(p.title));
      // Shorter by far, nearly every game paper still there, few of the disliked theme.
      expect(listed.length).toBeLessThan(papers.length * 0.6);
      expect(kept.filter((t) => t === 'game').length).toBeGreaterThanOrEqual(games * 0.8);
      expect(kept.filter((t) => t === 'llm').length).toBeLessThanOrEqual(listed.length * 0.2);
    });

    // Last: it prunes every digest's paper list.
    it("a digest pruned by retention answers 410: its feedback links expired with its paper list", async () => {
      const p = papersOf(lastText)[0]!;
      const { token, paperId } = linkParts(p.more!);
      const later = new Date(h.clock.now().getTime() + 91 * 86_400_000);
      expect(await pruneOn(h, later, 90)).toBeGreaterThanOrEqual(4);

      const page = await fetch(`${h.base}/feedback/${token}/${paperId}/more`);
      expect(page.status).toBe(410);
      const html = await page.text();
      expect(html).toContain('This digest is older than the retention period, so its list of papers was removed and its feedback links have expired.');
      const prefs = h.links.preferences(await subject(READER));
      expect(html.replaceAll('&#x2F;', '/')).toContain(`href="${prefs}"`); // its button: the reader's preferences page
      const follow = await postJson(`/follow/${token}/0/${paperId}`);
      expect(follow).toMatchObject({ status: 410, body: { ok: false, code: 'DIGEST_EXPIRED' } });
      // Another subscriber's pruned digest stays a plain 403: nothing tells whose digest it was.
      const theirs = (await digestsOf('other@example.org')).at(-1)!;
      expect((await postJson(`/feedback/${h.tokens.sign(await subject(READER), `view:${theirs.id}`)}/${paperId}/more`)).status).toBe(403);
    });
  });
});
