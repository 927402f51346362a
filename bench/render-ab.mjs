// `node bench/render-ab.mjs <dist A> <dist B> <database> [rows] [rounds] [block]`: two builds' CPU per digest
// (load, render, MIME build, as bench/load-render-loop.mjs, every card built first), measured in ONE process
// a block of `block` rows at a time, A and B alternating, so that the machine's drift falls on both alike.
// Decision: on this shared machine (load 15-20), separate runs of load-render-loop.mjs swung 0.74-1.14 ms for
// the same build; blocks alternated in one process agree to ~2%. But the build whose modules load first came
// out 3-8% cheaper every time (a build against a copy of itself: B/A 1.08), so the pair runs twice, in two
// children, A first then B first, and the ratio printed is the geometric mean of the two: the position's
// share cancels. Prints each order's rounds and, at the end, B/A.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alternate, runOrders } from './ab-pair.mjs';
import { renderParts } from './dist-render.mjs';

const args = process.argv.slice(2);
if (args[0] === '--child') await child(args.slice(1));
else parent(args);

function parent([a, b, db, rows = '2000', rounds = '3', block = '100']) {
  if (!a || !b || !db) {
    console.error('usage: node bench/render-ab.mjs <dist A> <dist B> <database> [rows] [rounds] [block]');
    process.exit(2);
  }
  runOrders(fileURLToPath(import.meta.url), a, b, [db, rows, rounds, block]);
}

async function child([first, second, db, rows, rounds, block]) {
  const builds = [await build(first, db, Number(rows)), await build(second, db, Number(rows))];
  for (const x of builds) for (const id of x.ids) x.one(id); // every card built: the steady state
  const ids = builds[0].ids;
  alternate(builds, ids, Number(rounds), Number(block), 'ms');
}

async function build(distArg, dbArg, rows) {
  const { openDatabase, DigestLoader, createRenderer, createMessageBuilder, benchLinks } = await renderParts(distArg);
  const db = openDatabase(resolve(dbArg), { migrate: false });
  const links = benchLinks({ now: () => new Date('2026-11-27T06:00:00Z') });
  const renderer = await createRenderer();
  const builder = createMessageBuilder({ from: 'Paper Digest <digest@bench.example>' });
  const loader = new DigestLoader(db, links);
  // One room reused for every message, as the mailer's MessageRooms does.
  let room = Buffer.allocUnsafeSlow(256 * 1024);
  const roomFor = (size) => {
    if (room.length < size) room = Buffer.allocUnsafeSlow(size * 2);
    return room.subarray(0, size);
  };
  const now = new Date();
  const ids = db.prepare('SELECT id FROM digests WHERE items IS NOT NULL ORDER BY id LIMIT ?').all(rows).map((r) => r.id);
  const one = (id) => {
    const loaded = loader.load(id, { papers: renderer.emailPapers });
    const mail = renderer.digest(loaded.view);
    builder.build(
      { to: loaded.subscriber.email, subject: mail.subject, html: '', text: '', encoded: mail.encoded, listUnsubscribe: { url: loaded.view.links.unsubscribe } },
      `ab-${id}@bench.example`,
      now,
      roomFor,
    );
    mail.release?.();
  };
  return { ids, one, cpu: 0, n: 0 };
}
