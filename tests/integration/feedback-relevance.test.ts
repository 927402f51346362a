// The relevance study of `npm run bench:relevance` (bench/relevance-study.ts), one split, two interests:
// readers who vote through their emails' links get better-ordered digests than a reader who never
// clicks, and "you may also like" papers, each with the liked paper behind it, once they have voted.
// Direction only: the figures themselves are in BENCHMARKS.md. On both engines: a SQLite file, or one
// PostgreSQL schema (migrated once) where the readers subscribe, the batches are ingested, `digest run`'s
// tick plans and sends (PostgreSQL's model pass orders the digests) and the served links record the votes.
// (Split from feedback-story.test.ts, the reader's own story through the links of their emails.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERESTS, rankFigures, readEmail, runStudy, type DayFigures } from '../../bench/relevance-study.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { TEST_NOW } from '../helpers/test-app.ts';
import { startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

forEachEngine('the relevance study', (engine) => {
  describe('the relevance study: voters against a reader who never clicks', () => {
    let s: WebHarness;
    let figures: DayFigures[] = [];
    beforeAll(async () => {
      s = await startWebHarness({}, TEST_NOW, { engine });
      figures = await runStudy(s, { days: 6, split: 1, interests: INTERESTS.slice(0, 2) });
    }, 300_000); // ~60 s alone, 120 s on a loaded machine
    afterAll(async () => {
      await s?.close();
    });
    const mean = (xs: number[]) => xs.filter((x) => !Number.isNaN(x)).reduce((a, b, _, all) => a + b / all.length, 0);
    const after3 = (role: string) => figures.filter((f) => f.day >= 4 && f.role === role);

    it('after three days of votes the voters rank relevant papers higher than the baseline reader, and never worse on a day; a follower gets the followed author apart from the list', () => {
      expect(after3('voter').length).toBeGreaterThanOrEqual(4);
      expect(mean(after3('voter').map((f) => f.auc))).toBeGreaterThan(mean(after3('baseline').map((f) => f.auc)));
      expect(mean(after3('voter').map((f) => f.meanRank))).toBeLessThan(mean(after3('baseline').map((f) => f.meanRank)));
      expect(mean(after3('voter').map((f) => f.p5))).toBeGreaterThanOrEqual(mean(after3('baseline').map((f) => f.p5)));
      // Never worse on a day: the model overturns the planner's order only by a margin (PLANNER_WEIGHT). A
      // voter's list also holds suggestions, so the order is compared on the baseline's papers.
      for (const f of figures.filter((x) => x.role === 'voter')) {
        const b = figures.find((x) => x.day === f.day && x.interest === f.interest && x.role === 'baseline')!;
        expect(f.p5).toBeGreaterThanOrEqual(b.p5);
        const theirs = f.titles.filter((t) => b.titles.includes(t));
        if (!Number.isNaN(b.auc)) expect(rankFigures(theirs.map((t) => f.flags[f.titles.indexOf(t)] === '+')).auc).toBeGreaterThanOrEqual(b.auc - 1e-9);
      }
      // A follower: the followed author is not one more matched topic, and the papers only the followed
      // author brought (what the reader asked for by name) are shown apart, "from authors you follow", above
      // the list: the ranked list is the baseline's, paper for paper. On this split the llms follower follows
      // the interest's lab: that block holds more of the interest than the baseline's list does.
      const followers = figures.filter((x) => x.role === 'follower');
      for (const f of followers) {
        const b = figures.find((x) => x.day === f.day && x.interest === f.interest && x.role === 'baseline')!;
        expect(f.titles).toEqual(b.titles);
      }
      const shown = followers.reduce((a, f) => a + f.followedShown, 0);
      expect(shown).toBeGreaterThan(0);
      const baselines = figures.filter((x) => x.role === 'baseline');
      const baseShare = baselines.reduce((a, f) => a + f.relevantListed, 0) / baselines.reduce((a, f) => a + f.listed, 0);
      expect(followers.reduce((a, f) => a + f.followedRelevant, 0) / shown).toBeGreaterThan(baseShare);
      // A reader with one vote has no evidence yet: their digest keeps the baseline's order.
      for (const f of figures.filter((x) => x.role === 'one-vote')) {
        const b = figures.find((x) => x.day === f.day && x.interest === f.interest && x.role === 'baseline')!;
        expect([f.p5, f.auc]).toEqual([b.p5, b.auc]);
      }
    });

    it('once a voter has voted 20 times, their emails bring suggestions ranked in the list, most of them relevant, each with its reason', () => {
      for (const interest of ['games', 'llms']) {
        const days = figures.filter((f) => f.role === 'voter' && f.interest === interest).sort((a, b) => a.day - b.day);
        let votes = 0;
        const later = days.filter((f) => {
          const ready = votes >= 20;
          votes += f.votes;
          return ready;
        });
        expect(later.length).toBeGreaterThan(0);
        expect(later.reduce((a, f) => a + f.suggested, 0)).toBeGreaterThan(0);
        // The model's confident ones are ranked inside the list, marked with their reason.
        expect(later.reduce((a, f) => a + f.inlineSuggested, 0)).toBeGreaterThan(0);
        for (const f of later) {
          const likedBefore = new Set(days.filter((x) => x.day < f.day).flatMap((x) => x.liked));
          for (const why of f.reasons) expect(likedBefore.has(why!)).toBe(true);
        }
      }
      // In the email itself: the card says why (text and HTML parts), its link is the preferences page (where
      // suggestions are turned off), the subject names only topics, and the paper is not listed twice.
      const mails = s.smtp.to('voter-games-1@study.example');
      const mail = mails.find((m) => /Matched: suggested, because you liked/.test(m.text))!;
      expect(mail).toBeDefined();
      expect(mail.html).toMatch(/Matched: <strong>suggested, because you liked &[^;]+;[^<]+<\/strong><\/span> <a href="[^"]*\/preferences\//);
      expect(mail.subject).not.toMatch(/suggest|liked/i);
      expect(mail.text).toMatch(/new papers? matched your topics and [1-3] suggested by your model/);
      const inline = readEmail(mail.text).papers.filter((p) => p.inline).map((p) => p.title);
      for (const t of inline) expect(mail.text.split(t).length - 1).toBe(1);
      const shown = figures.filter((f) => f.role === 'voter');
      const good = shown.reduce((a, f) => a + f.relevantSuggested, 0);
      expect(good / shown.reduce((a, f) => a + f.suggested, 0)).toBeGreaterThanOrEqual(0.5);
      // The baseline never voted: no model, no suggestions.
      expect(figures.filter((f) => f.role === 'baseline').reduce((a, f) => a + f.suggested, 0)).toBe(0);
    });
  });
});
