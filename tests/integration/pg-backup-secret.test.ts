// `digest backup` / `digest restore` on PostgreSQL never put the database password on pg_dump's or
// pg_restore's command line (which every user of the machine reads in `ps`): the tools run here through
// wrappers on PATH that write down their argv and whether PGPASSWORD reached them, then run the real tool.
// The URL carries a password the local server (trust authentication) ignores, so the dump and the restore
// really run. The whole backup-restore story on PostgreSQL is pg-operating-cli's.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupPostgres, libpqConnection, restorePostgres } from '../../src/db/postgres/backup.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { PG_TEST_URL, postgresForTests } from '../helpers/postgres.ts';

const pg = await postgresForTests();
const SECRET = 'Not-In-Argv-7e3f';

describe('libpqConnection', () => {
  it('takes the password out of the URL (userinfo, percent-encoded, or ?password=) and into PGPASSWORD, the rest kept', () => {
    expect(libpqConnection('postgres://root:p%40ss%2Fw@db.example:5433/app?sslmode=require')).toMatchObject({
      dbname: 'postgres://root@db.example:5433/app?sslmode=require',
      env: { PGPASSWORD: 'p@ss/w' },
    });
    const q = libpqConnection('postgresql://root@h/app?password=x&application_name=a');
    expect(q.dbname).toBe('postgresql://root@h/app?application_name=a');
    expect(q.env.PGPASSWORD).toBe('x');
    expect(libpqConnection('postgres://u:pw@/db?host=/var/run/postgresql').dbname).toBe('postgres://u@/db?host=/var/run/postgresql');
  });
});

describe.skipIf(!pg.reachable)('digest backup and restore on PostgreSQL: no password on the command line', () => {
  let bin: string;
  let log: string;
  let oldPath: string | undefined;
  const url = PG_TEST_URL.replace(/^(postgres(?:ql)?:\/\/)([^:@/]*)(?::[^@/]*)?@/, `$1$2:${SECRET}@`);

  beforeAll(() => {
    bin = mkdtempSync(join(tmpdir(), 'pg-tools-'));
    log = join(bin, 'calls.log');
    for (const tool of ['pg_dump', 'pg_restore']) {
      const real = `/usr/bin/${tool}`;
      const wrapper = join(bin, tool);
      writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\n' "${tool} $* password-in-env=\${PGPASSWORD:+yes}" >> '${log}'\nexec ${real} "$@"\n`);
      chmodSync(wrapper, 0o755);
    }
    oldPath = process.env.PATH;
    process.env.PATH = `${bin}:${oldPath}`;
  });
  afterAll(() => {
    process.env.PATH = oldPath;
    rmSync(bin, { recursive: true, force: true });
  });

  it('passes the connection without the password in argv, and the backup restores', async () => {
    expect(url).toContain(`:${SECRET}@`);
    const source = await pg.schema();
    const target = await pg.schema();
    try {
      await migratePostgres(source.pool);
      await source.pool.query(`INSERT INTO subscribers (email, status, token_salt, timezone, created_at) VALUES ('a@example.org', 'confirmed', 's', 'UTC', '2026-01-01T00:00:00Z')`);
      const file = join(bin, 'dump.pgc');
      const backup = await backupPostgres(url, source.name, file);
      expect(backup.counts.subscribers).toBe(1);
      await source.pool.query(`DROP SCHEMA ${source.name} CASCADE`);
      const restored = await restorePostgres(url, target.name, file);
      expect(restored.counts.subscribers).toBe(1);

      const calls = readFileSync(log, 'utf8').trim().split('\n');
      expect(calls.map((c) => c.split(' ')[0])).toEqual(['pg_dump', 'pg_restore', 'pg_restore', 'pg_restore']);
      for (const c of calls) expect(c).not.toContain(SECRET);
      // The tools that connect got it from their environment; pg_restore --list reads a file only.
      expect(calls.filter((c) => c.includes('--dbname=')).map((c) => c.endsWith('password-in-env=yes'))).toEqual([true, true]);
    } finally {
      await target.drop();
      await source.drop();
    }
  });
});
