// The settings check: near misses by edit distance, our prefixes, the system's own variables left alone;
// and .env.example lists exactly the settings the service reads (each missing or unknown name is named).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { editDistance, maskValue, suspiciousSettings } from '../../src/config-check.ts';
import { SETTING_NAMES } from '../../src/config.ts';

const check = (env: Record<string, string>, fromFile: string[] = []) =>
  suspiciousSettings({ env, fromFile: new Set(fromFile) }, SETTING_NAMES).map((s) => [s.name, s.suggestion ?? null]);

describe('the settings check', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('SMPT_URL', 'SMTP_URL')).toBe(1);
    expect(editDistance('DIGEST_CRONE', 'DIGEST_CRON')).toBe(1);
    expect(editDistance('HOME', 'HOST')).toBe(2);
  });

  it('names near misses and unknown names with our prefixes; leaves the system and other tools alone', () => {
    const env = {
      SMPT_URL: 'x', DATABSE_PATH: 'x', PUBLC_URL: 'x', SMTP_POOL: 'x', DKIM_KEY: 'x', PROT: 'x',
      HOME: '/root', PATH: '/bin', HOSTNAME: 'vm', TERM: 'xterm', MAIL: '/var/mail/root', NODE_OPTIONS: '', CI: 'true', POSTGRES_PASSWORD: 'x',
      SMTP_URL: 'smtp://h', PORT: '3000',
    };
    expect(check(env)).toEqual([
      ['DATABSE_PATH', 'DATABASE_PATH'],
      ['DKIM_KEY', null],
      ['PROT', 'PORT'],
      ['PUBLC_URL', 'PUBLIC_URL'],
      ['SMPT_URL', 'SMTP_URL'],
      ['SMTP_POOL', null],
    ]);
  });

  it('masks secrets and URL passwords', () => {
    expect(maskValue('SECRET_KEY', 'abc')).toBe('******** (3 characters)');
    expect(maskValue('ADMIN_PASSWORD_HASH', 'scrypt$1')).toBe('******** (8 characters)');
    expect(maskValue('SMTP_URL', 'smtps://me%40x.org:p@ss@relay.example.org:465')).toBe('smtps://me%40x.org:********@relay.example.org:465');
    expect(maskValue('SMTP_URL', 'smtp://relay.example.org:25')).toBe('smtp://relay.example.org:25');
    expect(maskValue('DKIM_PRIVATE_KEY_PATH', '/etc/dkim.pem')).toBe('/etc/dkim.pem');
  });

  // A name in .env.example: a line `NAME=…`, or one left commented out (`# NAME=…`).
  const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  const documented = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);

  it('every setting the service reads is in .env.example', () => {
    const missing = SETTING_NAMES.filter((n) => !documented.includes(n)).map((n) => `${n}: read by src/config.ts, missing from .env.example`);
    expect(missing).toEqual([]);
  });

  it('every setting in .env.example is one the service reads', () => {
    const extra = documented.filter((n) => !SETTING_NAMES.includes(n)).map((n) => `${n}: in .env.example, unknown to src/config.ts`);
    expect(extra).toEqual([]);
  });
});
