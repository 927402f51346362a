// `npm run bench:relevance [-- --splits 3 --days 6 --json FILE --like-only]`: the simulated study of
// bench/relevance-study.ts on several day splits of the sample listing, each on a fresh service (real
// SQLite file, real SMTP capture, real web server; only the clock is fake). Prints, per split and day and
// per kind of reader (mean over the interests): P@5, P@10, AUC, mean rank of the relevant papers, and the
// suggestions' precision and reach; then the figures pooled over the days after the third, against the
// targets, and every (reader, day) that did worse than the baseline reader of the same interest.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startWebHarness } from '../tests/helpers/web-harness.ts';
import { rankFigures, ROLES, runLikeStudy, runStudy, type DayFigures, type LikeFigures } from './relevance-study.ts';

const { values: o } = parseArgs({
  options: { splits: { type: 'string', default: '3' }, days: { type: 'string', default: '6' }, json: { type: 'string' }, 'like-only': { type: 'boolean', default: false } },
});
const log = (l: string) => process.stdout.write(`${l}\n`);
const mean = (xs: number[]) => {
  const ok = xs.filter((x) => !Number.isNaN(x));
  return ok.length === 0 ? NaN : ok.reduce((a, b) => a + b, 0) / ok.length;
};
const f2 = (x: number) => (Number.isNaN(x) ? '  - ' : x.toFixed(2));
const pct = (x: number, of: number) => (Number.isNaN(x) || !(of > 0) ? '-' : `${Math.round((100 * x) / of)}%`);
const share = (num: number, den: number) => (den === 0 ? NaN : num / den);

function summary(rows: DayFigures[]): string {
  const sugg = rows.reduce((a, r) => a + r.suggested, 0);
  const inline = rows.reduce((a, r) => a + (r.inlineSuggested ?? 0), 0);
  const good = rows.reduce((a, r) => a + r.relevantSuggested, 0);
  const missed = rows.reduce((a, r) => a + r.missedRelevant, 0);
  const p5 = mean(rows.map((r) => r.p5));
  const list = mean(rows.map((r) => r.ceilingP5));
  const day = mean(rows.map((r) => r.dayCeilingP5));
  const fol = rows.reduce((a, r) => a + (r.followedShown ?? 0), 0);
  const folGood = rows.reduce((a, r) => a + (r.followedRelevant ?? 0), 0);
  const followed = fol === 0 ? '' : `  from followed authors ${fol} (relevant ${folGood}, ${f2(share(folGood, fol))})`;
  return `P@5 ${f2(p5)} (perfect list ${f2(list)} = ${pct(p5, list)}; best of the day ${f2(day)} = ${pct(p5, day)})  P@10 ${f2(mean(rows.map((r) => r.p10)))}  AUC ${f2(mean(rows.map((r) => r.auc)))}  rank ${f2(mean(rows.map((r) => r.meanRank)))}  suggestions ${sugg} (${inline} in the list) precision ${f2(share(good, sugg))} reach ${f2(share(good, missed))} (${good}/${missed})${followed}`;
}

const all: DayFigures[] = [];
const likes: LikeFigures[] = [];
const splits = Number(o.splits);
const days = Number(o.days);
for (let split = 0; split < splits; split++) {
  const t = performance.now();
  if (!o['like-only']) {
    const h = await startWebHarness();
    try {
      all.push(...(await runStudy(h, { days, split })));
    } finally {
      await h.close();
    }
  }
  const l = await startWebHarness();
  try {
    likes.push(...(await runLikeStudy(l, { days, split })));
  } finally {
    await l.close();
  }
  log(`\n== split ${split} (${((performance.now() - t) / 1000).toFixed(1)} s)`);
  for (const f of likes.filter((x) => x.split === split)) {
    log(`like: ${f.theme.padEnd(18)} precision ${f2(share(f.sameTheme, f.listed))} (${f.sameTheme}/${f.listed})  found ${f2(share(f.sameTheme, f.themeTotal))} (${f.sameTheme}/${f.themeTotal})${f.exampleListed ? '  EXAMPLE LISTED' : ''}  example: ${f.example.slice(0, 60)}`);
  }
  const ls = likes.filter((x) => x.split === split);
  const [ll, lg, lt] = [ls.reduce((a, f) => a + f.listed, 0), ls.reduce((a, f) => a + f.sameTheme, 0), ls.reduce((a, f) => a + f.themeTotal, 0)];
  log(`like: all themes       precision ${f2(share(lg, ll))} (${lg}/${ll})  found ${f2(share(lg, lt))} (${lg}/${lt})`);
  // The same papers with the theme read as aboutTheme (in the title, or named twice; relevance-study.ts).
  const [ag, at] = [ls.reduce((a, f) => a + f.aboutTheme, 0), ls.reduce((a, f) => a + f.aboutTotal, 0)];
  log(`like: all themes, "about" reading  precision ${f2(share(ag, ll))} (${ag}/${ll})  found ${f2(share(ag, at))} (${ag}/${at})`);
  for (let d = 1; d <= days; d++) {
    for (const role of ROLES) {
      const rows = all.filter((r) => r.split === split && r.day === d && r.role === role);
      if (rows.length > 0) log(`day ${d} ${role.padEnd(9)} ${summary(rows)}  votes ${rows.reduce((a, r) => a + r.votes, 0)}`);
    }
  }
}

log(`\n== pooled over days 4-${days}, all splits`);
for (const role of ROLES) log(`${role.padEnd(9)} ${summary(all.filter((r) => r.day >= 4 && r.role === role))}`);
log(`\n== per split, days 4-${days}`);
for (let split = 0; split < splits; split++) {
  for (const role of ROLES) log(`split ${split} ${role.padEnd(9)} ${summary(all.filter((r) => r.split === split && r.day >= 4 && r.role === role))}`);
}

// No reader worse than the baseline: per split, interest and day, P@5 and AUC against the baseline's. A
// follower's list also holds the followed author's papers: AUC over two different lists compares the
// baseline's papers in each reader's order too ("on the baseline's papers").
const worse: string[] = [];
let worseShared = 0;
for (const r of all) {
  if (r.role === 'baseline') continue;
  const b = all.find((x) => x.split === r.split && x.day === r.day && x.interest === r.interest && x.role === 'baseline');
  if (!b) continue;
  const same = r.listKey === b.listKey;
  const theirs = new Set(b.titles);
  const sharedAuc = rankFigures(r.titles.filter((t) => theirs.has(t)).map((t) => r.flags[r.titles.indexOf(t)] === '+')).auc;
  const aucWorse = r.auc < b.auc - 1e-9;
  const sharedWorse = same ? aucWorse : sharedAuc < b.auc - 1e-9;
  if (r.p5 < b.p5 - 1e-9 || sharedWorse) worseShared++;
  if (r.p5 < b.p5 - 1e-9 || aucWorse) {
    worse.push(`split ${r.split} day ${r.day} ${r.interest}/${r.role}: P@5 ${f2(r.p5)} vs ${f2(b.p5)}, AUC ${f2(r.auc)} vs ${f2(b.auc)}${same ? '' : `, on the baseline's papers ${f2(sharedAuc)}`} (${r.listed} papers${same ? '' : `, not the baseline's ${b.listed}`}; order ${r.flags} vs ${b.flags})`);
  }
}
const byRole = (role: string) => worse.filter((w) => w.includes(`/${role}:`)).length;
log(`\n== readers worse than the baseline on a day (P@5 or AUC lower): ${worse.length} (voters ${byRole('voter')}, one-vote ${byRole('one-vote')}, followers ${byRole('follower')}); with AUC over the baseline's papers where the lists differ: ${worseShared}`);
for (const w of worse) log(`  ${w}`);
if (o.json) writeFileSync(o.json, JSON.stringify({ readers: all, like: likes }, null, 1));
