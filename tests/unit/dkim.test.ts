// Our DKIM signer, verified by an independent implementation (mailauth), on bodies that exercise the
// relaxed canonicalisation: blanks at line ends, tabs and runs of spaces, empty lines at the end.
import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { DkimSigner } from '../../src/mail/dkim.ts';
import { appErrorFrom } from '../helpers/app-error.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const resolver = async (name: string, type: string) => {
  if (type === 'TXT' && name === 'sel._domainkey.papers.example.org') return [[`v=DKIM1; k=rsa; p=${spki}`]];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};
const signer = new DkimSigner({ domainName: 'papers.example.org', keySelector: 'sel', privateKey: pem, headerFieldNames: 'From:Subject:To:List-Unsubscribe-Post:Date' });

const message = (body: string) =>
  Buffer.from(
    [
      'From: Paper Digest <digest@papers.example.org>',
      'To: ada@example.com',
      'Subject: a long subject that is folded',
      '\tover two lines   with  blanks',
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      body,
    ].join('\r\n'),
  );

describe('DKIM signer', () => {
  for (const [name, body] of [
    ['a plain body', 'Hello\r\n'],
    ['blanks at line ends, tabs, runs of spaces, empty lines at the end', 'Hello  world\t \r\n\tindented \r\n\r\n\r\n'],
    ['an empty body', ''],
  ] as const) {
    it(`signs what mailauth verifies: ${name}`, async () => {
      const signed = signer.sign(message(body));
      expect(signed.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=papers\.example\.org;/);
      const result = await dkimVerify(signed, { resolver });
      expect(result.results[0]!.status.result).toBe('pass');
      // A header outside the list (MIME-Version) is not in h=; a missing one (Date) is left out.
      expect(/;\s*h=([^;]+)/.exec(signed.toString('latin1').replace(/\r\n\s+/g, ''))?.[1]).toBe('from:subject:to:list-unsubscribe-post');
    });
  }

  it('a changed body or signed header fails verification', async () => {
    const signed = signer.sign(message('Hello\r\n')).toString('latin1');
    const verdict = async (s: string) => (await dkimVerify(Buffer.from(s, 'latin1'), { resolver })).results[0]!.status;
    // mailauth: a body hash mismatch is 'neutral' (body changed), a header change 'fail'.
    const body = await verdict(signed.replace('Hello', 'Hallo'));
    expect(body.result).not.toBe('pass');
    expect(body.comment).toMatch(/body hash/);
    expect((await verdict(signed.replace('One-Click', 'Two-Clicks'))).result).toBe('fail');
  });

  it('refuses a key it cannot read, at once, naming it', () => {
    const e = appErrorFrom(() => new DkimSigner({ domainName: 'x.org', keySelector: 's', privateKey: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----', headerFieldNames: 'From' }));
    expect(e.code).toBe('DKIM_KEY_INVALID');
    expect(e.message).toMatch(/^DKIM private key/);
  });
});
