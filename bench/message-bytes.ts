// Where a digest message's bytes go: `npx tsx bench/message-bytes.ts`. Renders a friendly digest (18
// papers) and a broad one (190 papers: DIGEST_FULL_PAPERS in full, the rest compact) with realistic links
// (bench/sample-digest.ts: signed-token lengths, the digest's feedback links, mute links), builds each message as the sender does,
// and prints the split: HTML and text parts as the reader sees them and as encoded, the transfer
// encoding's expansion, lines for the relay to read, per full card / compact line / shell, markup against
// visible text. Papers are the bundled sample's real abstracts.
import { createMessageBuilder } from '../src/mail/raw-message.ts';
import { createRenderer } from '../src/render/render.ts';
import { sampleDigest } from './sample-digest.ts';

const view = sampleDigest;

const renderer = await createRenderer();
const builder = createMessageBuilder({ from: 'Paper Digest <digest@digest.example.org>' });

function measure(n: number) {
  const mail = renderer.digest(view(n));
  const raw = builder.build(
    { to: 'reader.name@university.example.edu', subject: mail.subject, html: '', text: '', encoded: mail.encoded, listUnsubscribe: { url: 'https://digest.example.org/u' } },
    'digest-1.2025-11-25@digest.example.org',
    new Date(),
  ).raw;
  const html = mail.html;
  const text = mail.text;
  const htmlEncoded = mail.encoded!.html.reduce((s, b) => s + b.length, 0);
  const textEncoded = mail.encoded!.text.reduce((s, b) => s + b.length, 0);
  const rawText = raw.toString('latin1');
  const lines = rawText.split('\r\n').length;
  const htmlEnc = Buffer.concat(mail.encoded!.html).toString('latin1');
  const visible = html
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<[^>]*>/g, '')
    .replace(/&[a-z#0-9]+;/g, 'x')
    .replace(/\s+/g, ' ');
  const styleAttrs = [...html.matchAll(/ style="[^"]*"/g)].reduce((s, m) => s + m[0].length, 0);
  const hrefs = [...html.matchAll(/ href="[^"]*"/g)].reduce((s, m) => s + m[0].length, 0);
  const headStyle = [...html.matchAll(/<style[\s\S]*?<\/style>/g)].reduce((s, m) => s + m[0].length, 0);
  const r = {
    shown: `${mail.fullPapers} full + ${mail.shownPapers - (mail.fullPapers ?? 0)} compact of ${n}`,
    message: raw.length,
    lines,
    maxLine: Math.max(...rawText.split('\r\n').map((l) => l.length)),
    htmlText: Buffer.byteLength(html),
    htmlEncoded,
    htmlLines: htmlEnc.split('\r\n').length,
    textText: Buffer.byteLength(text),
    textEncoded,
    textLines: Buffer.concat(mail.encoded!.text).toString('latin1').split('\r\n').length,
    eq3D: (htmlEnc.match(/=3D/g) ?? []).length,
    softBreaks: (htmlEnc.match(/=\r\n/g) ?? []).length,
    otherEscapes: (htmlEnc.match(/=[0-9A-F]{2}/g) ?? []).length - (htmlEnc.match(/=3D/g) ?? []).length,
    visibleText: Buffer.byteLength(visible),
    styleAttrs,
    hrefs,
    headStyle,
  };
  mail.release?.();
  return r;
}

const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
for (const [name, n] of [['friendly', 18], ['broad', 190]] as const) {
  const m = measure(n);
  // Per card: the difference between digests of different lengths (full cards only below DIGEST_FULL_PAPERS).
  console.log(`\n${name} (${m.shown}): message ${kb(m.message)}, ${m.lines} lines (longest ${m.maxLine})`);
  console.log(`  HTML  ${kb(m.htmlText)} as read -> ${kb(m.htmlEncoded)} encoded (${m.htmlLines} lines; ${m.eq3D} "=3D", ${m.softBreaks} soft breaks, ${m.otherEscapes} other escapes)`);
  console.log(`  text  ${kb(m.textText)} as read -> ${kb(m.textEncoded)} encoded (${m.textLines} lines)`);
  console.log(`  HTML: visible text ${kb(m.visibleText)}, style attributes ${kb(m.styleAttrs)}, hrefs ${kb(m.hrefs)}, <style> blocks ${kb(m.headStyle)}`);
}
const one = measure(1);
const ten = measure(11);
const full = measure(25);
const compact = measure(35);
console.log(`\nper full card: HTML ${kb((ten.htmlText - one.htmlText) / 10)} as read, ${kb((ten.htmlEncoded - one.htmlEncoded) / 10)} encoded; text ${kb((ten.textText - one.textText) / 10)} as read, ${kb((ten.textEncoded - one.textEncoded) / 10)} encoded`);
console.log(`per compact line: HTML ${kb((compact.htmlText - full.htmlText) / 10)} as read, ${kb((compact.htmlEncoded - full.htmlEncoded) / 10)} encoded; text ${kb((compact.textText - full.textText) / 10)} as read, ${kb((compact.textEncoded - full.textEncoded) / 10)} encoded (first compact line carries the section)`);
console.log(`shell (one-paper digest minus a card): HTML ${kb(one.htmlText - (ten.htmlText - one.htmlText) / 10)} as read; message headers and MIME ~${kb(one.message - one.htmlEncoded - one.textEncoded)}`);
