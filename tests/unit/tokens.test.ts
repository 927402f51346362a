// Link tokens: the compact form every digest link carries now, and the long form of emails sent before it
// (and of confirmation links, which expire). What a reader would notice: a link from any email they ever
// got keeps working, and no edited, swapped or borrowed link acts for anyone.
import { describe, expect, it } from 'vitest';
import { Tokens, type TokenPurpose } from '../../src/tokens.ts';

const tokens = new Tokens('test-secret-key-0123456789abcdef0123456789');
const reader = { id: 10780, tokenSalt: 'salt-of-reader' };
const other = { id: 10781, tokenSalt: 'salt-of-other' };
const now = new Date('2026-11-25T12:00:00Z');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function purposeOf(token: string, subject = reader): TokenPurpose | undefined {
  const check = tokens.verify(token, subject, now);
  return check.ok ? check.token.purpose : undefined;
}

describe('compact link tokens', () => {
  it('are half as long as the long form and name the subscriber and purpose they were made for', () => {
    const view = tokens.sign(reader, 'view:10780');
    expect(view).toMatch(/^8bg\.v8bg\.[A-Za-z0-9_-]{22}$/);
    expect(view.length).toBe(31);
    expect(tokens.signLong(reader, 'view:10780').length).toBe(62);
    expect(tokens.sign(reader, 'manage')).toMatch(/^8bg\.m\.[A-Za-z0-9_-]{22}$/);
    expect(tokens.sign(reader, 'feed')).toMatch(/^8bg\.f\.[A-Za-z0-9_-]{22}$/);
    expect(tokens.sign(reader, 'mute:32338')).toMatch(/^8bg\.toya\.[A-Za-z0-9_-]{22}$/);
    for (const purpose of ['view:10780', 'manage', 'feed', 'mute:32338', 'mute:0', 'view:9007199254740991'] as TokenPurpose[]) {
      expect(purposeOf(tokens.sign(reader, purpose))).toBe(purpose);
      expect(tokens.peek(tokens.sign(reader, purpose))).toEqual({ subscriberId: reader.id, purpose, exp: 0 });
    }
  });

  it('refuse another subscriber, a rotated salt, an edited id or purpose, and a cut signature', () => {
    const view = tokens.sign(reader, 'view:10780');
    expect(tokens.verify(view, other, now)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(tokens.verify(view, { ...reader, tokenSalt: 'rotated' }, now)).toEqual({ ok: false, reason: 'bad-signature' });
    const [, , sig] = view.split('.');
    // Another digest, a mute of the same number, the manage page, another subscriber's id: same signature.
    for (const edited of [`8bg.v8bh.${sig}`, `8bg.t8bg.${sig}`, `8bg.m.${sig}`, `8bh.v8bg.${sig}`]) {
      const subject = edited.startsWith('8bh') ? other : reader;
      expect(tokens.verify(edited, subject, now).ok).toBe(false);
    }
    // Any one character of the signature changed, to any other, or the signature cut short. The last
    // character carries 4 unused bits, which a base64 decoder ignores: its other spellings are refused too.
    for (const token of [view, tokens.signLong(reader, 'manage')]) {
      const start = token.lastIndexOf('.') + 1;
      for (let i = start; i < token.length; i++) {
        for (const c of ALPHABET) {
          if (c === token[i]) continue;
          const edited = token.slice(0, i) + c + token.slice(i + 1);
          expect(tokens.verify(edited, reader, now), edited).toEqual({ ok: false, reason: 'bad-signature' });
        }
      }
    }
    expect(tokens.verify(view.slice(0, -2), reader, now)).toEqual({ ok: false, reason: 'malformed' });
    // Ids are read as they were signed: a leading zero or upper case is not another spelling of the same id.
    expect(tokens.verify(view.replace(/^8bg\.v8bg/, '08bg.v8bg'), reader, now)).toEqual({ ok: false, reason: 'malformed' });
    expect(tokens.verify(view.replace(/^8bg\.v8bg/, '8bg.v08bg'), reader, now)).toEqual({ ok: false, reason: 'malformed' });
    expect(tokens.verify(view.replace(/^8bg/, '8BG'), reader, now)).toEqual({ ok: false, reason: 'malformed' });
    // An id past the safe integers is no id at all.
    expect(tokens.verify(`zzzzzzzzzzz.m.${sig}`, reader, now)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('cannot be turned into a long-form token or back: the two forms sign different texts', () => {
    const compact = tokens.sign(reader, 'manage');
    const long = tokens.signLong(reader, 'manage');
    const compactSig = compact.split('.').pop()!;
    const longSig = long.split('.').pop()!;
    expect(tokens.verify(`10780.manage.0.${compactSig}${'A'.repeat(21)}`, reader, now).ok).toBe(false);
    expect(tokens.verify(`8bg.m.${longSig.slice(0, 22)}`, reader, now).ok).toBe(false);
  });
});

describe('long-form link tokens', () => {
  it('from emails sent before the compact form keep working for their purpose', () => {
    for (const purpose of ['view:10780', 'manage', 'feed', 'mute:32338', 'paper:5'] as TokenPurpose[]) {
      const long = tokens.signLong(reader, purpose);
      expect(long).toMatch(/^10780\.[a-z]+(-\d+)?\.0\.[A-Za-z0-9_-]{43}$/);
      expect(purposeOf(long)).toBe(purpose);
      expect(purposeOf(long, other)).toBeUndefined();
    }
  });

  it('are still what a confirmation link (which expires) and a per-paper link get, and expiry is kept', () => {
    const confirm = tokens.sign(reader, 'confirm', new Date('2026-11-26T00:00:00Z'));
    expect(confirm).toMatch(/^10780\.confirm\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(purposeOf(confirm)).toBe('confirm');
    expect(tokens.verify(confirm, reader, new Date('2026-11-27T00:00:00Z'))).toEqual({ ok: false, reason: 'expired' });
    expect(tokens.sign(reader, 'paper:7')).toMatch(/^10780\.paper-7\.0\./);
  });
});
