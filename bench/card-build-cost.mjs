// `node bench/card-build-cost.mjs <dist dir> <database> [rows]`: CPU spent building cards (CardCache.build, wrapped in
// process.cpuUsage) while one thread renders the first `rows` digests of a planned edition once, each card built
// once. Two builds' `dist/` on one edition, alternated, compare what a card's build costs (issue 41, fourth pass).
import { resolve } from 'node:path';
import { renderParts } from './dist-render.mjs';
const [distArg, dbArg, rowsArg] = process.argv.slice(2);
const { dist, openDatabase, DigestLoader, createRenderer, benchLinks } = await renderParts(distArg);
const { CardCache } = await import(`${dist}/render/card-cache.js`);
const { systemClock } = await import(`${dist}/clock.js`);
const build = CardCache.prototype.build;
let us = 0, n = 0;
CardCache.prototype.build = function (...a) { const c = process.cpuUsage(); const r = build.apply(this, a); const d = process.cpuUsage(c); us += d.user + d.system; n++; return r; };
const db = openDatabase(resolve(dbArg), { migrate: false });
const links = benchLinks(systemClock);
const renderer = await createRenderer();
const ids = db.prepare('SELECT id FROM digests WHERE items IS NOT NULL ORDER BY id LIMIT ?').all(Number(rowsArg ?? -1)).map((r) => r.id);
const loader = new DigestLoader(db, links);
const c0 = process.cpuUsage();
for (const id of ids) renderer.digest(loader.load(id, { papers: renderer.emailPapers }).view);
const all = process.cpuUsage(c0);
console.log(`${distArg}: ${n} builds, ${(us / 1000).toFixed(0)} ms CPU in build (${(us / n / 1000).toFixed(3)} ms each) of ${((all.user + all.system) / 1000).toFixed(0)} ms for ${ids.length} digests`);
