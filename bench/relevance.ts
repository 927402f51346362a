// `npm run bench:relevance [-- --splits 3 --days 6 --json FILE]`: the simulated study of
// bench/relevance-study.ts on several day splits of the sample listing, each on a fresh service (real
// SQLite file, real SMTP capture, real web server; only the clock is fake). Prints, per split and day and
// per kind of reader (mean over the interests): P@5, P@10, AUC, mean rank of the relevant papers, and the
// suggestions' precision and reach; then the figures pooled over the days after the third, against the
// targets, and every (reader, day) that did worse than the baseline reader of the same interest.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startWebHarness } from '../tests/helpers/web-harness.ts';
import { ROLES, runLikeStudy, runStudy, type DayFigures, type LikeFigures } from './relevance-study.ts';

const { values: o } = parseArgs({
  options: { splits: { type: 'string', default: '3' }, days: { type: 'string', default: '6' }, json: { type: 'string' } },
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
  return `P@5 ${f2(p5)} (perfect list ${f2(list)} = ${pct(p5, list)}; best of the day ${f2(day)} = ${pct(p5, day)})  P@10 ${f2(mean(rows.map((r) => r.p10)))}  AUC ${f2(mean(rows.map((r) => r.auc)))}  rank ${f2(mean(rows.map((r) => r.meanRank)))}  suggestions ${sugg} (${inline} in the list) precision ${f2(share(good, sugg))} reach ${f2(share(good, missed))} (${good}/${missed})`;
}

const all: DayFigures[] = [];
const likes: LikeFigures[] = [];
const splits = Number(o.splits);
const days = Number(o.days);
for (let split = 0; split < splits; split++) {
  const h = await startWebHarness();
  const t = performance.now();
  try {
    all.push(...(await runStudy(h, { days, split })));
  } finally {
    await h.close();
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
  for (const role of ['voter', 'baseline'] as const) log(`split ${split} ${role.padEnd(9)} ${summary(all.filter((r) => r.split === split && r.day >= 4 && r.role === role))}`);
}

// No reader worse than the baseline: per split, interest and day, P@5 and AUC against the baseline's.
const worse: string[] = [];
for (const r of all) {
  if (r.role === 'baseline') continue;
  const b = all.find((x) => x.split === r.split && x.day === r.day && x.interest === r.interest && x.role === 'baseline');
  if (!b) continue;
  // A follower's list holds the followed author's papers too: their orders compare only on the same list.
  const same = r.listKey === b.listKey;
  if (r.p5 < b.p5 - 1e-9 || r.auc < b.auc - 1e-9) {
    worse.push(`split ${r.split} day ${r.day} ${r.interest}/${r.role}: P@5 ${f2(r.p5)} vs ${f2(b.p5)}, AUC ${f2(r.auc)} vs ${f2(b.auc)} (${r.listed} papers${same ? '' : `, not the baseline's ${b.listed}: a followed author's papers`}; order ${r.flags} vs ${b.flags})`);
  }
}
// A follower's author: topic is a second matched topic on that author's papers, and the planner lists papers
// by topics matched first: those days are the reader's own choice, counted apart.
const byModel = worse.filter((w) => !w.includes('/follower:')).length;
log(`\n== readers worse than the baseline on a day: ${worse.length} (voters and one-vote readers ${byModel}; followers ${worse.length - byModel}, their followed author's papers first)`);
for (const w of worse) log(`  ${w}`);
if (o.json) writeFileSync(o.json, JSON.stringify({ readers: all, like: likes }, null, 1));
