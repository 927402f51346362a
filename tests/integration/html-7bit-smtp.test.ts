// A digest whose HTML part is 7bit (src/render/encode/html-body.ts), through the real SMTP mailer to a real SMTP
// server: lines that start with a dot (a <style> rule, a lone "." line) arrive intact, so the SMTP layer's
// dot-stuffing still does its job for this part; and a rendered digest keeps a DKIM signature an
// independent verifier (mailauth, relaxed body canonicalisation) accepts.
import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeHtmlBody, HtmlBodyWriter } from '../../src/render/encode/html-body.ts';
import { encodeQuotedPrintable } from '../../src/mail/quoted-printable.ts';
import type { SmtpMailerOptions } from '../../src/mail/smtp-mailer.ts';
import { createRenderer } from '../../src/render/render.ts';
import { mailerOnSink } from '../helpers/mailer-on-sink.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

const setup = (opts: Partial<SmtpMailerOptions> = {}) => mailerOnSink(open, { poolSize: 1, ...opts });

describe('7bit HTML part over SMTP', () => {
  it('lines starting with "." (a <style> rule, "..", a lone ".") arrive intact', async () => {
    const { sink, mailer } = await setup();
    const html = '<!doctype html><html><head><style>\n.pd-x { color: #111; }\n..pd-y { color: #222; }\n.\n</style></head><body><p>Café 😀</p></body></html>';
    const w = new HtmlBodyWriter();
    w.addText(html);
    const body = w.encoded();
    expect(body.transfer).toBe('7bit');
    expect(Buffer.concat(body.parts).toString('latin1')).toContain('\r\n.\r\n');
    await mailer.send({
      to: 'ada@example.com',
      subject: 'Dots',
      html: '',
      text: '',
      encoded: { html: body.parts, text: [encodeQuotedPrintable('Café')], htmlTransfer: body.transfer },
    });
    const raw = sink.messages[0]!.raw.toString('latin1');
    expect(raw).toContain('Content-Transfer-Encoding: 7bit');
    const email = await sink.messages[0]!.parse();
    const received = email.html!.replace(/\r?\n$/, '');
    expect(decodeHtmlBody(Buffer.from(received, 'latin1'))).toBe(html);
    expect(email.text?.trim()).toBe('Café');
  });

  it('a rendered digest with a 7bit HTML part is DKIM-signed and verifies', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const { sink, mailer } = await setup({ dkim: { domainName: 'papers.example.org', keySelector: 'digest2025', privateKey: pem } });
    const renderer = await createRenderer();
    const links = { preferences: 'https://d.example/p/t', unsubscribe: 'https://d.example/u/t', webView: 'https://d.example/w/t', home: 'https://d.example/' };
    const papers = Array.from({ length: 18 }, (_, i) => ({
      title: `Pokémon agents ${i}: reinforcement learning at scale`,
      url: `https://arxiv.org/abs/2511.${10000 + i}`,
      authors: ['Zoë Ångström', 'Bo Chen'],
      abstract: `We study reinforcement learning. ${'Résumé of long results, .5 accuracy and -3 dB. '.repeat(14)}`,
      upvotes: i,
      categories: ['cs.LG'],
      publishedAt: '2025-11-24',
      matchedTopics: [{ text: 'reinforcement learning', muteUrl: 'https://d.example/m/t' }],
    }));
    const email = renderer.digest({ email: 'ada@example.com', edition: '2025-11-25', papers, links });
    expect(email.encoded!.htmlTransfer).toBe('7bit');
    await mailer.send({ to: 'ada@example.com', subject: email.subject, html: '', text: '', encoded: email.encoded, listUnsubscribe: { url: links.unsubscribe } });
    const raw = sink.messages[0]!.raw;
    const resolver = async (name: string, type: string) => {
      if (type === 'TXT' && name === 'digest2025._domainkey.papers.example.org') return [[`v=DKIM1; k=rsa; p=${spki}`]];
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
    };
    const result = await dkimVerify(raw, { resolver });
    expect(result.results[0]!.status.result).toBe('pass');
    const parsed = await sink.messages[0]!.parse();
    expect(decodeHtmlBody(Buffer.from(parsed.html!.replace(/\r?\n$/, ''), 'latin1'))).toBe(email.html);
  });
});
