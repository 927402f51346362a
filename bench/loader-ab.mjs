// `node bench/loader-ab.mjs <dist A> <dist B> <database> [rows] [rounds] [block]`: two builds' CPU per digest in
// DigestLoader.load alone (the sending loader: row statement, list walk, papers, links), measured as
// bench/render-ab.mjs measures the render path: ONE process per order, blocks of `block` rows alternating A and B
// (each build's own connection and loader, warmed over every row first: papers and lists cached as in a send
// run), both load orders in two children, B/A as the geometric mean of the two orders. Also checks that both
// builds load the same view (JSON of the view, links included) for every row of the first round.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alternate, runOrders } from './ab-pair.mjs';
import { renderParts } from './dist-render.mjs';

const args = process.argv.slice(2);
if (args[0] === '--child') await child(args.slice(1));
else parent(args);

function parent([a, b, db, rows = '20000', rounds = '3', block = '200']) {
  if (!a || !b || !db) {
    console.error('usage: node bench/loader-ab.mjs <dist A> <dist B> <database> [rows] [rounds] [block]');
    process.exit(2);
  }
  runOrders(fileURLToPath(import.meta.url), a, b, [db, rows, rounds, block]);
}

async function child([first, second, db, rows, rounds, block]) {
  const builds = [await build(first, db, Number(rows)), await build(second, db, Number(rows))];
  const ids = builds[0].ids;
  // Warm-up, and the same views from both builds.
  let differ = 0;
  for (const id of ids) {
    const [v0, v1] = builds.map((x) => JSON.stringify(x.one(id)));
    if (v0 !== v1 && differ++ < 3) console.log(`row ${id}: the builds' views differ`);
  }
  if (differ > 0) console.log(`${differ} of ${ids.length} rows differ`);
  alternate(builds, ids, Number(rounds), Number(block), 'µs');
}

async function build(distArg, dbArg, rows) {
  const { openDatabase, DigestLoader, createRenderer, benchLinks } = await renderParts(distArg);
  const db = openDatabase(resolve(dbArg), { migrate: false });
  const links = benchLinks({ now: () => new Date('2026-11-27T06:00:00Z') });
  const renderer = await createRenderer();
  const loader = new DigestLoader(db, links);
  const ids = db.prepare('SELECT id FROM digests WHERE items IS NOT NULL ORDER BY id LIMIT ?').all(rows).map((r) => r.id);
  const one = (id) => loader.load(id, { papers: renderer.emailPapers });
  return { ids, one, cpu: 0, n: 0 };
}
