// `node bench/message-decoded-hash.mjs <dist dir> <database> [rows]`: one SHA-256 over what every message a
// build makes of an edition's first `rows` ledger rows SAYS: the subject, the HTML part decoded from its 7bit
// layout (decodeHtmlBody: each line break the encoder placed back to the space it replaced) or from
// quoted-printable (then from its layout too), and the text part as encoded. Two builds printing the same hash send the same emails
// once decoded, whatever their line breaks: how a change of the HTML layout alone (where lines break) is
// checked, where bench/message-hash.mjs (every byte) must differ. Also checks every 7bit HTML line: at most
// 990 octets (HTML_MAX_LINE), printable ASCII, none starting with '.' or '-'; prints the count of parts
// sent as quoted-printable (the layout's fallback) and of lines that break those rules (0 expected).
import { resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { renderParts } from './dist-render.mjs';

const [distArg, dbArg, rowsArg] = process.argv.slice(2);
const { dist, openDatabase, DigestLoader, createRenderer, benchLinks } = await renderParts(distArg);
const { decodeHtmlBody, HTML_MAX_LINE } = await import(`${dist}/render/encode/html-body.js`);
const db = openDatabase(resolve(dbArg), { migrate: false });
const links = benchLinks({ now: () => new Date('2026-11-27T06:00:00Z') });
const renderer = await createRenderer();
const ids = db.prepare('SELECT id FROM digests WHERE items IS NOT NULL ORDER BY id LIMIT ?').all(Number(rowsArg ?? -1)).map((r) => r.id);
const loader = new DigestLoader(db, links);
const all = createHash('sha256');
let qp = 0;
let bad = 0;
let lines = 0;
// The quoted-printable fallback encodes the same laid-out bytes (html-body.ts encoded()): decoded from both.
const decodeQp = (s) => Buffer.from(s.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16))), 'latin1');
for (const id of ids) {
  const mail = renderer.digest(loader.load(id, { papers: renderer.emailPapers }).view);
  const html = Buffer.concat(mail.encoded.html);
  let decoded;
  if (mail.encoded.htmlTransfer === 'quoted-printable') {
    qp++;
    decoded = decodeHtmlBody(decodeQp(html.toString('latin1')));
  } else {
    decoded = decodeHtmlBody(html);
    for (const line of html.toString('latin1').split('\r\n')) {
      lines++;
      if (line.length > HTML_MAX_LINE || /^[.-]/.test(line) || !/^[\x20-\x7e\t]*$/.test(line)) bad++;
    }
  }
  all.update(`${mail.subject}\n${decoded}\n`).update(Buffer.concat(mail.encoded.text));
  mail.release?.();
}
console.log(ids.length, 'digests', all.digest('hex'), `(${qp} HTML parts as quoted-printable; ${bad} of ${lines} 7bit lines over ${HTML_MAX_LINE} octets, not printable or starting with '.' or '-')`);
