// Our MIME builder against nodemailer's own composer (through its public API: a stream transport's
// `sendMail` hands back the message it built) on the same input: both messages parsed by an independent parser (postal-mime) must show a
// reader the same thing, part by part and header by header. The builder exists only for speed (README,
// "Where we wrote our own"); this is what keeps it honest.
import { createTransport } from 'nodemailer';
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

const composer = createTransport({ streamTransport: true, buffer: true });

/** The message nodemailer builds for the same input. */
async function nodemailersRaw(mail: OutgoingMail, from = FROM): Promise<Buffer> {
  const lu = mail.listUnsubscribe;
  const info = await composer.sendMail({
    from,
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
  return info.message as Buffer;
}

async function nodemailers(mail: OutgoingMail): Promise<Email> {
  return PostalMime.parse(await nodemailersRaw(mail));
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

describe('address and subject headers, byte for byte as nodemailer writes them', () => {
  const froms = [FROM, 'digest@papers.example.org', "Résumés d'articles <d@papers.example.org>", '"Digest, Papers" <d@papers.example.org>', 'Пейпер Дайджест <d@papers.example.org>'];
  const tos = ['ada@example.com', 'José Núñez <jose@example.com>', '"Lovelace, Ada" <ada@example.com>', 'Ada L. <ada@example.com>', 'a@example.com, b@example.org', '日本語の名前 <n@example.jp>', 'mari@jõgeva.ee'];
  const subjects = ['Your papers', 'Vos articles — Pokémon, ε-greedy et “diffusion” 🎓 '.repeat(3), 'Обзор статей за неделю: диффузионные модели и обучение с подкреплением', `${'x'.repeat(120)} y z`];
  /** The From, To and Subject header lines, folded as written. */
  const lines = (raw: Buffer) =>
    raw.toString('latin1').split('\r\n\r\n')[0]!.split(/\r\n(?=\S)/).filter((l) => /^(From|To|Subject):/.test(l)).sort();

  it('From, To and Subject for ASCII, quoted, non-Latin and IDN names and long subjects', async () => {
    for (const from of froms) {
      for (const to of tos) {
        for (const subject of subjects) {
          const mail: OutgoingMail = { to, subject, html: '<p>x</p>', text: 'x' };
          const ours = createMessageBuilder({ from }).build(mail, MESSAGE_ID, DATE).raw;
          expect(lines(ours), `${from} / ${to} / ${subject}`).toEqual(lines(await nodemailersRaw(mail, from)));
        }
      }
    }
  });
});
