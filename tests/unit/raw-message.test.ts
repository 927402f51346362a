// The raw MIME builder and its quoted-printable encoder, read back by an independent parser (postal-mime):
// what a mail client would show, and the byte-level rules relays and SMTP rely on.
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { createMessageBuilder } from '../../src/mail/raw-message.ts';
import { encodeQuotedPrintable } from '../../src/mail/quoted-printable.ts';
import type { OutgoingMail } from '../../src/mail/types.ts';
import { appErrorFrom } from '../helpers/app-error.ts';

const FROM = 'Paper Digest <digest@papers.example.org>';
const DATE = new Date('2025-11-25T07:00:00Z');

const mail = (extra: Partial<OutgoingMail> = {}): OutgoingMail => ({
  to: 'ada@example.com',
  subject: 'Your papers',
  html: '<p>Hello</p>',
  text: 'Hello',
  ...extra,
});

function build(m: OutgoingMail, messageId = 'digest-7.2025-11-25@papers.example.org') {
  return createMessageBuilder({ from: FROM }).build(m, messageId, DATE);
}

/** Mail bodies come back with CRLF line breaks and a final one: compare what a reader sees. */
const shown = (s: string | undefined) => (s ?? '').replace(/\r\n/g, '\n').replace(/\n+$/, '');

describe('raw message builder', () => {
  it('makes a message any parser reads back: headers, both parts, non-ASCII subject and body', async () => {
    const html = `<html><body><p style="color:#111">Pokémon ≠ Pokemon, naïve — “quoted” = fine</p>\n<a href="https://x.example/?a=1&amp;b=2">link</a></body></html>`;
    const text = 'Pokémon ≠ Pokemon\n\nA line with a trailing space \nand a tab\t\n.starts with a dot\n= equals';
    const subject = '3 new papers on “diffusion”, Pokémon and more — 2025-11-25';
    const built = build(
      mail({ subject, html, text, listUnsubscribe: { url: 'https://digest.example.org/unsubscribe/TOKEN', mailto: 'unsubscribe@papers.example.org' } }),
    );
    const email = await PostalMime.parse(built.raw);

    expect(email.from).toMatchObject({ name: 'Paper Digest', address: 'digest@papers.example.org' });
    expect(email.to?.[0]?.address).toBe('ada@example.com');
    expect(email.subject).toBe(subject);
    expect(email.messageId).toBe('<digest-7.2025-11-25@papers.example.org>');
    expect(new Date(email.date!).toISOString()).toBe(DATE.toISOString());
    expect(shown(email.html)).toBe(html);
    expect(shown(email.text)).toBe(text);
    const lu = email.headers.filter((h) => h.key === 'list-unsubscribe');
    expect(lu).toHaveLength(1); // ONE header with both URIs
    expect(lu[0]!.value.replace(/\s+/g, ' ')).toBe(
      '<https://digest.example.org/unsubscribe/TOKEN>, <mailto:unsubscribe@papers.example.org?subject=unsubscribe>',
    );
    expect(email.headers.find((h) => h.key === 'list-unsubscribe-post')?.value).toBe('List-Unsubscribe=One-Click');
    expect(built.envelope).toEqual({ from: 'digest@papers.example.org', to: ['ada@example.com'] });
  });

  it('keeps an ASCII subject readable and RFC 2047-encodes only a non-ASCII one', () => {
    const plain = build(mail({ subject: '3 new papers on diffusion - 2025-11-25' })).raw.toString('latin1');
    expect(plain).toContain('\r\nSubject: 3 new papers on diffusion - 2025-11-25\r\n');
    const accented = build(mail({ subject: 'Café papers' })).raw.toString('latin1');
    expect(accented).toMatch(/\r\nSubject: =\?UTF-8\?[QB]\?/);
  });

  it('writes only 7-bit CRLF lines, none over 76 characters in the bodies, however long the input line', async () => {
    // Minified HTML is one very long line; multi-byte characters and escapes land on every boundary.
    const html = `<div>${'é=x '.repeat(3000)}</div>`;
    const built = build(mail({ html, text: 'ü'.repeat(500) }));
    const raw = built.raw.toString('latin1');
    expect(/[^\x00-\x7f]/.test(raw)).toBe(false);
    expect(/[^\r]\n|\r(?!\n)/.test(raw)).toBe(false); // no bare LF or CR
    const lines = raw.split('\r\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(998);
    const body = raw.slice(raw.indexOf('\r\n\r\n'));
    expect(Math.max(...body.split('\r\n').map((l) => l.length))).toBeLessThanOrEqual(76);
    const email = await PostalMime.parse(built.raw);
    expect(shown(email.html)).toBe(html);
    expect(shown(email.text)).toBe('ü'.repeat(500));
  });

  it('refuses what would break the message or inject headers, naming the field', () => {
    const b = createMessageBuilder({ from: FROM });
    expect(appErrorFrom(() => b.build(mail({ to: 'ada@example.com\r\nBcc: eve@example.com' }), 'a@b', DATE)).message).toMatch(/^to: /);
    expect(appErrorFrom(() => b.build(mail(), 'not an id', DATE)).message).toMatch(/^messageId: /);
    expect(appErrorFrom(() => b.build(mail({ headers: { Subject: 'again' } }), 'a@b', DATE)).message).toMatch(/^headers: "Subject"/);
    expect(appErrorFrom(() => b.build(mail({ listUnsubscribe: { url: 'https://x.example/u>, <https://evil' } }), 'a@b', DATE)).message).toMatch(
      /^listUnsubscribe\.url: /,
    );
    expect(appErrorFrom(() => createMessageBuilder({ from: 'Paper Digest' })).message).toMatch(/^MAIL_FROM: /);
    // A CR/LF inside a subject cannot start a new header.
    const raw = b.build(mail({ subject: 'Hi\r\nBcc: eve@example.com' }), 'a@b', DATE).raw.toString('latin1');
    expect(raw).not.toMatch(/\r\nBcc:/);
  });
});

describe('quoted-printable', () => {
  it('escapes =, non-ASCII and line-final blanks, leaves the rest as is, and never splits an escape', () => {
    expect(encodeQuotedPrintable('a=b').toString()).toBe('a=3Db');
    expect(encodeQuotedPrintable('café').toString()).toBe('caf=C3=A9');
    expect(encodeQuotedPrintable('end \nnext\t').toString()).toBe('end=20\r\nnext=09');
    expect(encodeQuotedPrintable('.dot\n.again').toString()).toBe('=2Edot\r\n=2Eagain');
    const long = encodeQuotedPrintable(`${'x'.repeat(74)}é`).toString();
    expect(long).toBe(`${'x'.repeat(74)}=\r\n=C3=A9`); // the escape moves to the next line whole
    expect(encodeQuotedPrintable('x'.repeat(200)).toString().split('\r\n').map((l) => l.length)).toEqual([76, 76, 50]); // 75 + "=" per line
  });
});

describe('envelope sender', () => {
  it('is the VERP address when one is given, whether the bodies come as text or already encoded', () => {
    const verp = 'bounces+7-0123456789abcdef0123456789abcdef@bounces.example.org';
    const encoded = { html: [encodeQuotedPrintable('<p>Hello</p>')], text: [encodeQuotedPrintable('Hello')] };
    expect(build(mail()).envelope.from).toBe('digest@papers.example.org');
    expect(build(mail({ envelopeFrom: verp })).envelope.from).toBe(verp);
    expect(build(mail({ envelopeFrom: verp, encoded })).envelope.from).toBe(verp);
    expect(build(mail({ encoded })).envelope.from).toBe('digest@papers.example.org');
  });
});
