// `digest admin-password` from a pipe, and the scrypt hash it prints checked by the login's verifier.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { cmdAdminPassword } from '../../src/admin/password-prompt.ts';
import { verifyPassword } from '../../src/admin/password.ts';
import { loadConfig } from '../../src/config.ts';

async function run(input: string): Promise<{ code: number; out: string[] }> {
  const stdin = new PassThrough();
  stdin.end(input);
  const out: string[] = [];
  const code = await cmdAdminPassword({ out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false }, stdin as unknown as NodeJS.ReadStream);
  return { code, out };
}

describe('digest admin-password', () => {
  it('prints an ADMIN_PASSWORD_HASH line that config accepts and the login verifies', async () => {
    const { code, out } = await run('a long console password\nignored second line\n');
    expect(code).toBe(0);
    const m = /^ADMIN_PASSWORD_HASH='(scrypt\$32768\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+)'$/.exec(out[0]!);
    expect(m).not.toBeNull();
    const hash = m![1]!;
    expect(loadConfig({ ADMIN_PASSWORD_HASH: hash }).ADMIN_PASSWORD_HASH).toBe(hash);
    expect(await verifyPassword('a long console password', hash)).toBe(true);
    expect(await verifyPassword('a long console passwore', hash)).toBe(false);
    expect(await verifyPassword('a long console password', 'scrypt$1$1$1$x$y')).toBe(false);
  });

  it('refuses a short password and names the rule', async () => {
    await expect(run('short\n')).rejects.toThrow('password: at least 12 characters (got 5)');
  });

  it('config refuses a value that is not such a hash, naming the variable', () => {
    expect(() => loadConfig({ ADMIN_PASSWORD_HASH: 'hunter2' })).toThrow(/ADMIN_PASSWORD_HASH: must be a hash made by `digest admin-password`/);
    expect(() => loadConfig({ BOUNCE_ADDRESS: 'bounces@example.org' })).toThrow(/BOUNCE_ADDRESS needs SECRET_KEY/);
    expect(() => loadConfig({ BOUNCE_ADDRESS: 'b+x@example.org', SECRET_KEY: 'k'.repeat(32) })).toThrow(/BOUNCE_ADDRESS: must be a plain email address without "\+"/);
  });
});
