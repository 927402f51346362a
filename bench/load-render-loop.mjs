// `node bench/load-render-loop.mjs <dist dir> <database> [rounds] [rows]`: the sender's work per digest without
// the SMTP exchange and the ledger's writes: DigestLoader.load, render, MIME build, over every ledger row of
// a database that holds an edition (e.g. the database of a `digest run`, or `npm run bench -- --keep`), in
// one thread, `rounds` times (default 3; the first warms up), over the first `rows` rows (default all).
// Prints CPU per digest (process.cpuUsage). Measured: `valgrind --tool=callgrind` over 300 rows counts
// instructions, but V8's tiering makes one build's totals vary by ~10% between runs, so it settles no more
// than alternating runs do.
// The loop is bench/per-digest.ts's (the `per-digest CPU` stage of `npm run bench`), which measures the
// working tree only; this one loads a given build's `dist/`, so a base and a change run on one database.
// Two builds (a `dist/` each: build a base revision in a worktree) run alternately on the same database
// compare like for like; on this shared machine one build's rounds drift by 10-40%, so alternate and repeat.
// `--alloc` (anywhere): also the bytes each digest allocates on the JS heap (new space used after minus before,
// counted only for digests with no scavenge inside: the space did not shrink). Run it with a large young
// generation (`node --max-semi-space-size=64 …`) so most digests have none.
// `--one-loader`: one DigestLoader for every round, as a sending thread keeps one for its run (its papers and
// lists cached; the card cache sees the same paper objects again). Without it, a loader per round.
import { resolve } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { renderParts } from './dist-render.mjs';

const ALLOC = process.argv.includes('--alloc');
const ONE_LOADER = process.argv.includes('--one-loader');
const [distArg, dbArg, roundsArg, rowsArg] = process.argv.slice(2).filter((a) => a !== '--alloc' && a !== '--one-loader');
const newSpaceUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_used_size;
if (!distArg || !dbArg) {
  console.error('usage: node bench/load-render-loop.mjs <dist dir> <database> [rounds] [rows]');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3);
const { dist, openDatabase, DigestLoader, createRenderer, createMessageBuilder, benchLinks } = await renderParts(distArg);
const { systemClock } = await import(`${dist}/clock.js`);

const db = openDatabase(resolve(dbArg), { migrate: false });
const links = benchLinks(systemClock);
const renderer = await createRenderer();
const builder = createMessageBuilder({ from: 'Paper Digest <digest@bench.example>' });
const ids = db.prepare('SELECT id FROM digests WHERE items IS NOT NULL ORDER BY id LIMIT ?').all(Number(rowsArg ?? -1)).map((r) => r.id);
const now = new Date();
// One room reused for every message, as the mailer's MessageRooms does (a new ~115 KB Buffer per message
// costs an allocation the service does not make).
let room = Buffer.allocUnsafeSlow(256 * 1024);
let built = 0;
const roomFor = (size) => {
  built = size;
  if (room.length < size) room = Buffer.allocUnsafeSlow(size * 2);
  return room.subarray(0, size);
};
const runLoader = new DigestLoader(db, links);
for (let round = 0; round < rounds; round++) {
  const loader = ONE_LOADER ? runLoader : new DigestLoader(db, links);
  let bytes = 0;
  let loadMs = 0;
  let renderMs = 0;
  let allocated = 0;
  let measured = 0;
  const cpu = process.cpuUsage();
  for (const id of ids) {
    const heapBefore = ALLOC ? newSpaceUsed() : 0;
    const a = performance.now();
    const loaded = loader.load(id, { papers: renderer.emailPapers });
    const b = performance.now();
    const mail = renderer.digest(loaded.view);
    renderMs += performance.now() - b;
    loadMs += b - a;
    builder.build(
      { to: loaded.subscriber.email, subject: mail.subject, html: '', text: '', encoded: mail.encoded, listUnsubscribe: { url: loaded.view.links.unsubscribe } },
      `loop-${id}@bench.example`,
      now,
      roomFor,
    );
    bytes += built;
    mail.release?.();
    if (ALLOC) {
      const grown = newSpaceUsed() - heapBefore;
      if (grown >= 0) {
        allocated += grown;
        measured++;
      }
    }
  }
  const used = process.cpuUsage(cpu);
  const per = (x) => (x / ids.length).toFixed(3);
  console.log(
    `round ${round + 1}: ${ids.length} digests, CPU ${per((used.user + used.system) / 1000)} ms per digest ` +
      `(load ${per(loadMs)} + render ${per(renderMs)} ms wall, the rest MIME build); messages ${(bytes / ids.length / 1024).toFixed(1)} KB` +
      (ALLOC ? `; JS heap allocated ${(allocated / Math.max(1, measured) / 1024).toFixed(1)} KB per digest (${measured} digests without a scavenge)` : ''),
  );
}
db.close();
