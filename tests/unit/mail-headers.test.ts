// The address shapes the builder accepts and how a reader's client shows them (postal-mime reads back).
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { createMessageBuilder } from '../../src/mail/raw-message.ts';
import { appErrorFrom } from '../helpers/app-error.ts';

const DATE = new Date('2025-11-25T07:00:00Z');
const mail = (to: string, extra: Record<string, string> = {}) => ({ to, subject: 'Papers', html: '<p>x</p>', text: 'x', headers: extra });

async function readBack(from: string, to: string, extra: Record<string, string> = {}) {
  const built = createMessageBuilder({ from }).build(mail(to, extra), 'a.1@papers.example.org', DATE);
  return { built, email: await PostalMime.parse(built.raw) };
}

describe('message headers: addresses and names', () => {
  it('a quoted display name with a comma stays one recipient', async () => {
    const { built, email } = await readBack('Paper Digest <digest@papers.example.org>', '"Lovelace, Ada" <ada@example.com>');
    expect(built.envelope.to).toEqual(['ada@example.com']);
    expect(email.to).toEqual([{ name: 'Lovelace, Ada', address: 'ada@example.com' }]);
  });

  it('non-ASCII names are encoded words that read back as written; several recipients each reach the envelope', async () => {
    const { built, email } = await readBack('Résumés des articles <digest@papers.example.org>', 'José Núñez <jose@example.com>, grace@example.org');
    expect(email.from).toEqual({ name: 'Résumés des articles', address: 'digest@papers.example.org' });
    expect(email.to).toEqual([{ name: 'José Núñez', address: 'jose@example.com' }, { name: '', address: 'grace@example.org' }]);
    expect(built.envelope).toEqual({ from: 'digest@papers.example.org', to: ['jose@example.com', 'grace@example.org'] });
    expect(built.raw.toString('latin1').split('\r\n\r\n')[0]).toMatch(/^[\x20-\x7e\r\n]+$/);
  });

  it('an internationalised domain goes out in punycode', async () => {
    const { built } = await readBack('Paper Digest <digest@papers.example.org>', 'Mari <mari@jõgeva.ee>');
    expect(built.envelope.to).toEqual(['mari@xn--jgeva-dua.ee']);
  });

  it('a Reply-To extra header is written as an address', async () => {
    const { email } = await readBack('digest@papers.example.org', 'ada@example.com', { 'Reply-To': 'Ünïcode Desk <desk@papers.example.org>' });
    expect(email.replyTo).toEqual([{ name: 'Ünïcode Desk', address: 'desk@papers.example.org' }]);
  });

  it('refuses what is not an address, naming it', () => {
    const b = createMessageBuilder({ from: 'digest@papers.example.org' });
    for (const to of ['Ada Lovelace', 'friends: ada@example.com;', '<>', 'ada@example.com <grace@example.org']) {
      expect(appErrorFrom(() => b.build(mail(to), 'a.1@papers.example.org', DATE)).code).toBe('MAIL_ADDRESS_INVALID');
    }
    expect(appErrorFrom(() => createMessageBuilder({ from: 'a@example.org, b@example.org' })).code).toBe('MAIL_FROM_INVALID');
  });
});
