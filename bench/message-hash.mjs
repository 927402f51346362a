// `node bench/message-hash.mjs <dist dir> <database> [rows]`: one SHA-256 over every message a build makes of
// an edition's first `rows` ledger rows (load, render, MIME build, as bench/load-render-loop.mjs; the clock
// fixed, the random MIME boundary masked). Two builds (a base's `dist/` copied aside, and this one) printing
// the same hash on the same database send byte-identical messages: how a render optimisation is checked.
import { resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { renderParts } from './dist-render.mjs';
const [distArg, dbArg, rowsArg] = process.argv.slice(2);
const { openDatabase, DigestLoader, createRenderer, createMessageBuilder, benchLinks } = await renderParts(distArg);
const db = openDatabase(resolve(dbArg), { migrate: false });
const clock = { now: () => new Date('2026-11-27T06:00:00Z') };
const links = benchLinks(clock);
const renderer = await createRenderer();
const builder = createMessageBuilder({ from: 'Paper Digest <digest@bench.example>' });
const ids = db.prepare('SELECT id FROM digests WHERE items IS NOT NULL ORDER BY id LIMIT ?').all(Number(rowsArg ?? -1)).map((r) => r.id);
const loader = new DigestLoader(db, links);
const all = createHash('sha256');
let room = Buffer.allocUnsafeSlow(512 * 1024); let built = 0;
const roomFor = (size) => { built = size; if (room.length < size) room = Buffer.allocUnsafeSlow(size * 2); return room.subarray(0, size); };
for (const id of ids) {
  const loaded = loader.load(id, { papers: renderer.emailPapers });
  const mail = renderer.digest(loaded.view);
  builder.build({ to: loaded.subscriber.email, subject: mail.subject, html: '', text: '', encoded: mail.encoded, listUnsubscribe: { url: loaded.view.links.unsubscribe } }, `same-${id}@bench.example`, new Date('2026-11-27T06:00:00Z'), roomFor);
  const msg = room.subarray(0, built).toString("latin1"); if (process.env.DUMP && id === ids[0]) process.stdout.write(msg.slice(0, 1500)); all.update(msg.replace(/=_pd_[0-9a-f]{24}/g, "=_pd_B"));
  mail.release?.();
}
console.log(ids.length, 'digests', all.digest('hex'));
