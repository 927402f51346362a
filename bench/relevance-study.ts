// The simulated relevance study (`npm run bench:relevance`; its direction is asserted on both engines in
// tests/integration/feedback-relevance.test.ts). Readers with a hidden interest (a fixed rule over real titles
// and abstracts) subscribe with a deliberately broad topic, receive a digest a day, and act only through
// the links of the emails they receive (GET the link, then POST the page's form, as a person does):
//   voter     "more like this" on every relevant paper shown (list and suggestions), "less" on the
//             irrelevant ones among the first five and on irrelevant suggestions;
//   follower  follows the first author of the first relevant paper shown, and nothing else;
//   one-vote  one "more like this" on the first relevant paper of their first email, and nothing else;
//   baseline  never clicks.
// Each interest has one reader of each kind; the papers are the 71 real abstracts of the sample listing,
// dealt into days by a seeded shuffle (a "split"), so the same study can be run on several splits.
import { readFileSync } from 'node:fs';
import { readBatchFile } from '../src/ingest/readers/batch.ts';
import { ingestOn, subscribeOn, tickOn } from '../tests/helpers/engine-harness-ops.ts';
import type { WebHarness } from '../tests/helpers/web-harness.ts';

export interface StudyPaper {
  id: string;
  title: string;
  abstract: string;
  url: string;
  authors: string[];
}

export interface Interest {
  name: string;
  /** The hidden rule: relevant when it matches title + abstract. */
  rule: RegExp;
  /** The broad topic every reader of this interest subscribes with. */
  topic: string;
}

export const INTERESTS: Interest[] = [
  { name: 'games', rule: /\b(games?|gameplay|poker|chess|starcraft|pok[eé]mon|hold.em|rocket league)\b/i, topic: 'reinforcement learning' },
  { name: 'llms', rule: /\b(LLMs?|large language models?|language models?)\b/i, topic: 'agent' },
  { name: 'reasoning', rule: /\breasoning\b/i, topic: 'policy' },
];

export const ROLES = ['voter', 'follower', 'one-vote', 'baseline'] as const;
export type Role = (typeof ROLES)[number];

/** One reader's figures for one day's email. */
export interface DayFigures {
  split: number;
  day: number;
  interest: string;
  role: Role;
  listed: number;
  /** The listed titles, sorted and joined: two readers' orders compare only when their lists are the same. */
  listKey: string;
  relevantListed: number;
  p5: number;
  p10: number;
  /** P@5 of a perfect ordering of the same list (what no ordering can beat). */
  ceilingP5: number;
  /**
   * The best P@5 any email could have had that day: min(5, relevant papers of the day's batch) / 5, as if
   * every relevant paper that arrived were listed first (what a list plus suggestions could at most show).
   */
  dayCeilingP5: number;
  /** The listed titles in email order. */
  titles: string[];
  /** The list's relevance in email order, '+' relevant, '-' not (to print a day that went wrong). */
  flags: string;
  /** Share of (relevant, irrelevant) pairs of the list in the right order; NaN when the list has only one kind. */
  auc: number;
  /** Mean 1-based rank of the relevant papers of the list (NaN when none). */
  meanRank: number;
  suggested: number;
  /** Of those, ranked inside the list. */
  inlineSuggested: number;
  relevantSuggested: number;
  /** Relevant papers of the day's batch the list did not hold (what suggestions could reach). */
  missedRelevant: number;
  votes: number;
  /** The suggestions' reasons (titles of liked papers), as the email gave them. */
  reasons: Array<string | undefined>;
  /** Papers of the email's "from authors you follow" block (not ranked in the list), and of those relevant. */
  followedShown: number;
  followedRelevant: number;
  /** Titles the reader marked "more like this" or followed from, up to and including this email. */
  liked: string[];
}

const AUTHORS = ['Mira Okafor', 'Tomás Lindqvist', 'Aiko Tanaka', 'Ravi Menon', 'Lena Fischer', 'Omar Haddad', 'Sofia Rossi', 'Jonas Berg'];
/** One lab per interest: first author of every other paper of that interest (what a follower finds). */
const LABS = ['Yuki Morandi', 'Priya Castell', 'Noah Ferreira'];

/** The sample listing's papers, with two authors each: a lab of an interest first on half of its papers. */
export function studyPapers(interests: Interest[] = INTERESTS): StudyPaper[] {
  const sample = JSON.parse(readFileSync(new URL('../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
    papers: Array<{ id: string; title: string; abstract: string; url: string }>;
  };
  const seen = interests.map(() => 0);
  return sample.papers.map((p, i) => {
    const k = interests.findIndex((x) => x.rule.test(`${p.title} ${p.abstract}`));
    const lab = k >= 0 && (seen[k] = seen[k]! + 1) % 2 === 1 ? LABS[k % LABS.length] : undefined;
    return { ...p, authors: [lab ?? AUTHORS[(i * 5) % 8]!, AUTHORS[(i * 3 + 1) % 8]!] };
  });
}

/** A seeded shuffle of the papers dealt into `days` days (split 0: the listing's own order). */
export function dealDays(papers: StudyPaper[], days: number, split: number): StudyPaper[][] {
  const order = papers.slice();
  let seed = split * 7919 + 17;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  if (split > 0) for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const per = Math.ceil(order.length / days);
  return Array.from({ length: days }, (_, d) => order.slice(d * per, (d + 1) * per));
}

interface Listed {
  title: string;
  /** A suggestion's reason: the title of the liked paper behind it. */
  why?: string | undefined;
  more?: string | undefined;
  less?: string | undefined;
  follow?: string | undefined;
  /** A suggestion ranked inside the list (no topic matched it). */
  inline?: boolean | undefined;
}

/** The papers of a digest's text part, in order, and its suggestions. */
export function readEmail(text: string): { papers: Listed[]; suggestions: Listed[]; followed: Listed[] } {
  const [main, also = ''] = text.split(/\nYou may also like[^\n]*\n/);
  // "From authors you follow", above the list: the papers only a followed author brought.
  const block = /\nFrom authors you follow[^\n]*\n([\s\S]*?)\n\n/.exec(main!)?.[1] ?? '';
  const followed = block
    .split(/\n(?= - )/)
    .filter((b) => /^ - /.test(b))
    .map((b) => ({ title: /^ - (.*)$/m.exec(b)![1]!.trim(), more: /More like this: (\S+)/.exec(b)?.[1], less: /Less like this: (\S+)/.exec(b)?.[1] }));
  const papers = main!
    .split(/\n(?=\d+\. )/)
    .filter((b) => /^\d+\. /.test(b))
    .map((b) => ({
      title: /^\d+\. (.*)$/m.exec(b)![1]!.trim(),
      more: /More like this: (\S+)/.exec(b)?.[1],
      less: /Less like this: (\S+)/.exec(b)?.[1],
      follow: /Follow [^:]+: (\S+)/.exec(b)?.[1],
      // A suggestion the model ranked inside the list names its reason where a paper names its topics.
      inline: /^ {3}Matched: suggested/m.test(b),
      why: /^ {3}Matched: suggested, because you liked \u201c(.*)\u201d$/m.exec(b)?.[1]?.trim(),
    }));
  const suggestions = also
    .split(/\n(?= \* )/)
    .filter((b) => /^ \* /.test(b))
    .map((b) => ({ title: /^ \* (.*)$/m.exec(b)![1]!.trim(), why: /Because you liked: (.*)$/m.exec(b)?.[1]?.trim(), more: /More like this: (\S+)/.exec(b)?.[1], less: /Less like this: (\S+)/.exec(b)?.[1] }));
  return { papers, suggestions, followed };
}

/** P@k, AUC and mean rank of a ranked list of relevance flags. */
export function rankFigures(flags: boolean[]): { p5: number; p10: number; auc: number; meanRank: number } {
  const at = (k: number) => flags.slice(0, k).filter(Boolean).length / k;
  let right = 0;
  let rankSum = 0;
  flags.forEach((rel, i) => {
    if (!rel) return;
    right += flags.slice(i + 1).filter((f) => !f).length; // irrelevant papers below it
    rankSum += i + 1;
  });
  const rel = flags.filter(Boolean).length;
  const pairs = rel * (flags.length - rel);
  return { p5: at(5), p10: at(10), auc: pairs === 0 ? NaN : right / pairs, meanRank: rel === 0 ? NaN : rankSum / rel };
}

export interface StudyOptions {
  days: number;
  split: number;
  interests?: Interest[];
  /** First delivery date (YYYY-MM-DD); one day per digest after it. */
  start?: string;
}

/** Runs one split of the study on a fresh harness; returns every reader's figures for every day. */
export async function runStudy(h: WebHarness, opts: StudyOptions): Promise<DayFigures[]> {
  const interests = opts.interests ?? INTERESTS;
  const papers = studyPapers(interests);
  const days = dealDays(papers, opts.days, opts.split);
  const email = (i: Interest, role: Role) => `${role}-${i.name}-${opts.split}@study.example`;
  for (const i of interests) for (const role of ROLES) await subscribeOn(h, { email: email(i, role), topics: [i.topic] });
  const relevant = (i: Interest, title: string) => {
    const p = papers.find((x) => x.title === title);
    return p !== undefined && i.rule.test(`${p.title} ${p.abstract}`);
  };
  const received = new Map<string, number>();
  const acted = new Set<string>();
  const likedBy = new Map<string, Set<string>>();
  const out: DayFigures[] = [];
  const start = Date.parse(`${opts.start ?? '2025-11-24'}T09:00:00Z`);
  for (let d = 0; d < days.length; d++) {
    const date = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
    h.clock.set(`${date}T09:00:00Z`);
    await ingestOn(h, readBatchFile({ source: `study-${opts.split}`, date, papers: days[d]! }));
    await tickOn(h);
    for (const i of interests) {
      for (const role of ROLES) {
        const to = email(i, role);
        const sent = await sentTo(h, to);
        if (sent === (received.get(to) ?? 0)) continue; // nothing matched today
        received.set(to, sent);
        const mail = await h.smtp.waitFor(to, sent, 15_000);
        const { papers: listed, suggestions: below, followed } = readEmail(mail.text);
        // P@5 and the rest count the list as the reader sees it, suggestions ranked in it included.
        const flags = listed.map((p) => relevant(i, p.title));
        const inList = new Set(listed.map((p) => p.title));
        const byTopics = new Set(listed.filter((p) => p.inline !== true).map((p) => p.title));
        const suggestions = [...listed.filter((p) => p.inline === true), ...below];
        // What suggestions could reach: the day's relevant papers no topic brought.
        const missed = days[d]!.filter((p) => i.rule.test(`${p.title} ${p.abstract}`) && !byTopics.has(p.title)).length;
        const before = new Set(likedBy.get(to) ?? []);
        const votes = await act(h, role, to, listed, below, (t) => relevant(i, t), acted, (title) => before.add(title));
        likedBy.set(to, before);
        out.push({
          split: opts.split, day: d + 1, interest: i.name, role, listed: listed.length, titles: listed.map((p) => p.title), listKey: [...inList].sort().join('\n'), relevantListed: flags.filter(Boolean).length,
          ...rankFigures(flags), ceilingP5: rankFigures(flags.slice().sort((x, y) => Number(y) - Number(x))).p5,
          dayCeilingP5: Math.min(5, days[d]!.filter((p) => i.rule.test(`${p.title} ${p.abstract}`)).length) / 5, flags: flags.map((f) => (f ? '+' : '-')).join(''), suggested: suggestions.length, inlineSuggested: suggestions.length - below.length, relevantSuggested: suggestions.filter((s) => relevant(i, s.title)).length,
          missedRelevant: missed, votes, followedShown: followed.length, followedRelevant: followed.filter((p) => relevant(i, p.title)).length, reasons: suggestions.map((s) => s.why), liked: [...(likedBy.get(to) ?? [])],
        });
      }
    }
  }
  return out;
}

/** Digests sent to `to` so far, in the harness's store (either engine). */
async function sentTo(h: WebHarness, to: string): Promise<number> {
  const sql = `SELECT count(*) AS n FROM digests g JOIN subscribers s ON s.id = g.subscriber_id WHERE s.email = ? AND g.status = 'sent'`;
  return Number((await h.sql.get<{ n: number | string }>(sql, to))!.n);
}

/** What a reader of this role clicks in one email; returns the clicks made. */
async function act(
  h: WebHarness, role: Role, to: string, listed: Listed[], suggestions: Listed[], relevant: (title: string) => boolean, acted: Set<string>,
  liked: (title: string) => void,
): Promise<number> {
  let clicks = 0;
  const go = async (url: string | undefined, title?: string) => {
    if (url === undefined) return;
    await click(h, url);
    clicks++;
    if (title !== undefined) liked(title);
  };
  if (role === 'voter') {
    for (const [k, p] of listed.entries()) {
      if (relevant(p.title)) await go(p.more, p.title);
      else if (k < 5) await go(p.less);
    }
    for (const s of suggestions) await (relevant(s.title) ? go(s.more, s.title) : go(s.less));
  } else if (role === 'one-vote' && !acted.has(to)) {
    const first = listed.find((p) => relevant(p.title));
    if (first) {
      await go(first.more, first.title);
      acted.add(to);
    }
  } else if (role === 'follower' && !acted.has(to)) {
    const first = listed.find((p) => relevant(p.title) && p.follow !== undefined);
    if (first) {
      await go(first.follow, first.title);
      acted.add(to);
    }
  }
  return clicks;
}

/** Opens a link from an email (GET: a page with one button), then submits that button's form. */
async function click(h: WebHarness, url: string): Promise<void> {
  const page = await fetch(h.local(url));
  if (page.status !== 200) throw new Error(`GET ${url}: ${page.status}`);
  const html = await page.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replaceAll('&#x2F;', '/').replaceAll('&amp;', '&');
  if (action === undefined) throw new Error(`no form on the page of ${url}`);
  const done = await fetch(`${h.base}${action}`, { method: 'POST' });
  await done.arrayBuffer(); // a body left unread holds its connection open, and the server waits for it on close
  if (done.status !== 200) throw new Error(`POST ${action}: ${done.status}`);
}

/** A theme for like: topics: its rule, and readers who give its first paper as their example. */
export interface LikeTheme {
  name: string;
  rule: RegExp;
}

/**
 * Whether a paper is about a theme: its title says so, or its title and abstract name it at least twice.
 * A single passing mention does not make a paper of the theme: "without reinforcement learning or
 * preference optimization" (a pretraining report), "ASearcher-Web-QwQ" (a model name in a search-agent
 * paper), "fine-tuned with RLHF" (a poker solver) matched the rule once and were counted as same-theme
 * papers a like: topic had missed (bench/like-probe.ts lists them). The study reports both readings.
 */
export function aboutTheme(theme: LikeTheme, p: Pick<StudyPaper, 'title' | 'abstract'>): boolean {
  if (theme.rule.test(p.title)) return true;
  return [...`${p.title} ${p.abstract}`.matchAll(new RegExp(theme.rule.source, 'gi'))].length >= 2;
}

export const LIKE_THEMES: LikeTheme[] = [
  { name: 'multi-agent', rule: /multi-agent/i },
  { name: 'self-play', rule: /self-play/i },
  { name: 'human preferences', rule: /human feedback|RLHF|preference optimi/i },
  { name: 'GUI and web agents', rule: /\bGUI\b|\bweb\b|browser/i },
];

export interface LikeFigures {
  split: number;
  theme: string;
  example: string;
  /** Papers the like: topic brought (every email), and how many of them are of the theme (the rule anywhere). */
  listed: number;
  sameTheme: number;
  /** Papers of the theme that arrived from the example's day on (the example not counted). */
  themeTotal: number;
  /** The same two counts with the theme read as aboutTheme (in the title, or named twice). */
  aboutTheme: number;
  aboutTotal: number;
  /** Whether the example itself was ever listed as a match. */
  exampleListed: boolean;
}

/**
 * like: readers: on the day the first paper of a theme (by its title) arrives, a reader subscribes with `like:<its id>`
 * (the database then holds only the days so far); their emails from then on are read.
 */
export async function runLikeStudy(h: WebHarness, opts: StudyOptions & { themes?: LikeTheme[] }): Promise<LikeFigures[]> {
  const themes = opts.themes ?? LIKE_THEMES;
  const days = dealDays(studyPapers(), opts.days, opts.split);
  const start = Date.parse(`${opts.start ?? '2025-11-24'}T09:00:00Z`);
  const readers = new Map<string, { theme: LikeTheme; example: StudyPaper; day: number; titles: string[] }>();
  for (let d = 0; d < days.length; d++) {
    const date = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
    h.clock.set(`${date}T09:00:00Z`);
    await ingestOn(h, readBatchFile({ source: `like-study-${opts.split}`, date, papers: days[d]! }));
    for (const theme of themes) {
      const to = `like-${theme.name.replaceAll(' ', '-')}-${opts.split}@study.example`;
      // A reader gives a paper that is plainly of the theme: its title says so.
      const example = days[d]!.find((p) => theme.rule.test(p.title));
      if (readers.has(to) || !example) continue;
      await subscribeOn(h, { email: to, topics: [`like:${example.id}`] });
      readers.set(to, { theme, example, day: d, titles: [] });
    }
    await tickOn(h);
    for (const [to, r] of readers) {
      const sent = await sentTo(h, to);
      if (sent === 0 || h.smtp.to(to).length >= sent + 1) continue;
      const mail = await h.smtp.waitFor(to, sent, 15_000);
      r.titles.push(...readEmail(mail.text).papers.map((p) => p.title).filter((t) => !r.titles.includes(t)));
    }
  }
  return [...readers.values()].map((r) => {
    const of = (p: Pick<StudyPaper, 'title' | 'abstract'>) => r.theme.rule.test(`${p.title} ${p.abstract}`);
    const papers = studyPapers();
    const later = days.slice(r.day).flat().filter((p) => of(p) && p.id !== r.example.id);
    const about = (p: Pick<StudyPaper, 'title' | 'abstract'>) => aboutTheme(r.theme, p);
    return {
      split: opts.split,
      theme: r.theme.name,
      example: r.example.title,
      listed: r.titles.length,
      sameTheme: r.titles.filter((t) => of(papers.find((p) => p.title === t)!)).length,
      themeTotal: later.length,
      aboutTheme: r.titles.filter((t) => about(papers.find((p) => p.title === t)!)).length,
      aboutTotal: later.filter(about).length,
      exampleListed: r.titles.includes(r.example.title),
    };
  });
}
