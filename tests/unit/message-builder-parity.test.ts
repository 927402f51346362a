// Our MIME builder against nodemailer's own composer (MailComposer, what `transport.sendMail` would
// build) on the same input: both messages parsed by an independent parser (postal-mime) must show a
// reader the same thing, part by part and header by header. The builder exists only for speed (README,
// "Where we wrote our own"); this is what keeps it honest.
import MailComposer from 'nodemailer/lib/mail-composer';
import PostalMime, { type Email } from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { createMessageBuilder } from '../../src/mail/raw-message.ts';
import type { OutgoingMail } from '../../src/mail/types.ts';

const FROM = 'Paper Digest <digest@papers.example.org>';
const DATE = new Date('2025-11-25T07:00:00Z');
const MESSAGE_ID = 'digest-7.2025-11-25@papers.example.org';

function ours(mail: OutgoingMail): Promise<Email> {
  return PostalMime.parse(createMessageBuilder({ from: FROM }).build(mail, MESSAGE_ID, DATE).raw);
}

async function nodemailers(mail: OutgoingMail): Promise<Email> {
  const lu = mail.listUnsubscribe;
  const composer = new MailComposer({
    from: FROM,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: `<${MESSAGE_ID}>`,
    date: DATE,
    headers: {
      ...(lu
        ? {
            'List-Unsubscribe': [`<${lu.url}>`, ...(lu.mailto ? [`<mailto:${lu.mailto}?subject=unsubscribe>`] : [])].join(', '),
            'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          }
        : {}),
      ...mail.headers,
    },
  });
  const raw = await new Promise<Buffer>((resolve, reject) =>
    composer.compile().build((err, message) => (err ? reject(err) : resolve(message))),
  );
  return PostalMime.parse(raw);
}

/** What a reader or a mail filter sees: addresses, subject, ids, both bodies, the list headers. */
function shown(e: Email) {
  const header = (name: string) => e.headers.find((h) => h.key === name)?.value.replace(/\s+/g, ' ');
  const body = (s: string | undefined) => (s ?? '').replace(/\r\n/g, '\n').replace(/\n+$/, '');
  return {
    from: e.from,
    to: e.to,
    subject: e.subject,
    messageId: e.messageId,
    date: e.date,
    text: body(e.text),
    html: body(e.html),
    listUnsubscribe: header('list-unsubscribe'),
    listUnsubscribePost: header('list-unsubscribe-post'),
    feedbackId: header('feedback-id'),
    attachments: e.attachments.length,
  };
}

const CASES: Array<[string, OutgoingMail]> = [
  ['a plain ASCII digest', { to: 'ada@example.com', subject: 'Your papers for Tue 25 Nov', html: '<p>Hello</p>', text: 'Hello' }],
  [
    'non-ASCII subject and bodies, long lines, "=" and trailing blanks',
    {
      to: 'José Núñez <jose@example.com>',
      subject: 'Vos articles — Pokémon, ε-greedy et “diffusion” 🎓',
      html: `<p style="color:#333">${'Étude de la diffusion = très longue ligne '.repeat(40)}</p>\n<p>fin  </p>`,
      text: `${'Résumé: a = b + c, sans retour à la ligne '.repeat(30)}\nline with trailing blanks   \n\nend`,
      listUnsubscribe: { url: 'https://digest.example.org/unsubscribe/abc.def-ghi', mailto: 'unsubscribe@example.org' },
      headers: { 'Feedback-ID': 'digest:papers:7' },
    },
  ],
  [
    'a 100 KB HTML body and a one-click URL alone',
    {
      to: 'grace@example.org',
      subject: 'Twelve new papers matched your topics',
      html: `<table>${'<tr><td>Speculative decoding with draft trees — naïve baselines</td></tr>\n'.repeat(1400)}</table>`,
      text: 'Twelve papers\n'.repeat(200),
      listUnsubscribe: { url: 'https://digest.example.org/unsubscribe/x' },
    },
  ],
];

describe('MIME builder parity with nodemailer', () => {
  for (const [name, mail] of CASES) {
    it(`reads back the same as nodemailer's composer: ${name}`, async () => {
      const [a, b] = await Promise.all([ours(mail), nodemailers(mail)]);
      expect(shown(a)).toEqual(shown(b));
      expect(shown(a).text.length).toBeGreaterThan(0);
      if (mail.listUnsubscribe) expect(shown(a).listUnsubscribe).toContain(mail.listUnsubscribe.url);
    });
  }
});
