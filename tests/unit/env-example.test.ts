// .env.example is where an operator learns the settings: every variable config.ts accepts is listed there
// (as NAME= or, for one to leave unset, # NAME=), and nothing is listed that config.ts would not read.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/config.ts';

const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));

describe('.env.example', () => {
  it('lists every setting the service reads', () => {
    expect(SETTING_NAMES.filter((name) => !listed.has(name))).toEqual([]);
  });

  it('lists nothing the service does not read', () => {
    expect([...listed].filter((name) => !SETTING_NAMES.includes(name))).toEqual([]);
  });

  it('finds a setting missing from a copy without it (the check can fail)', () => {
    const without = example.replace(/^SMTP_URL=.*$/m, '');
    const names = new Set([...without.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));
    expect(SETTING_NAMES.filter((name) => !names.has(name))).toContain('SMTP_URL');
  });
});
