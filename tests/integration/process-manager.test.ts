// Ready for a process manager: `npm start` hands SIGTERM to `digest serve` (which finishes and exits, no
// orphan left listening), its JSON log lines carry each key once, the systemd unit passes
// `systemd-analyze verify`, the Dockerfile runs serve as PID 1, and `engines` admits Node 20.19, 22 and 24
// (no dependency blocks them).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.ts';
import { REPO_ROOT } from '../helpers/delivery-setup.ts';
import { freePort } from '../helpers/ports.ts';
import { tempDatabaseDir, type TempDatabaseDir } from '../helpers/seed.ts';

const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('npm start under a process manager', () => {
  let d: TempDatabaseDir;
  beforeAll(() => {
    ensureBuilt();
    d = tempDatabaseDir('digest-npm-start-');
  }, 150_000);
  afterAll(() => d?.remove());

  it('SIGTERM to npm stops digest serve too (no orphan), and every JSON log line has one msg', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_PATH: join(d.dir, 'digest.sqlite'),
        PORT: String(port),
        HOST: '127.0.0.1',
        MAIL_CATCHER_PORT: '0',
        SOURCES: '',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    npm.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    npm.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.on('close', (code, signal) => resolve({ code, signal })));
    await until('digest serve to listen', () => stdout.includes('paper digest at'), 45_000);

    // The service, as a process manager sees npm's tree.
    const serve = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(npm.pid)], { encoding: 'utf8' }).trim();
    expect(serve).toMatch(/^\d+ node bin\/digest\.js serve$/);
    const servePid = Number(serve.split(' ')[0]);

    // A refused request logs its reason (a field once called msg, written beside the message: two msg keys).
    const refused = await fetch(`http://127.0.0.1:${port}/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{"email": "ada@example.com", "topics": [',
    });
    expect(refused.status).toBe(400);

    npm.kill('SIGTERM');
    const end = await exited;
    expect(end.code).toBe(0);
    await until('digest serve to exit', () => !alive(servePid), 5_000);

    const lines = stderr.trim().split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(3);
    for (const l of lines) expect(l.match(/"msg":/g), l).toHaveLength(1);
    const request = lines.map((l) => JSON.parse(l) as { msg: string; reason?: string }).find((l) => l.msg === 'request refused');
    expect(request?.reason).toMatch(/not valid JSON/);
    expect(lines.some((l) => l.includes('shutting down: finishing the sends in flight'))).toBe(true);
  });
});

describe('deployment files', () => {
  const hasSystemd = spawnSync('systemd-analyze', ['--version']).status === 0;
  it.skipIf(!hasSystemd)('deploy/digest.service passes systemd-analyze verify and runs serve itself', () => {
    const unit = join(REPO_ROOT, 'deploy', 'digest.service');
    const r = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readFileSync(unit, 'utf8')).toMatch(/^ExecStart=\/usr\/bin\/node \S+\/bin\/digest\.js serve$/m);
  });
  if (!hasSystemd) it('systemd-analyze verify', () => console.warn('skipped: systemd-analyze is not installed (apt-get install systemd)'));

  it('the Dockerfile runs digest serve as PID 1 on a supported Node', () => {
    const docker = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    expect(docker).toMatch(/^CMD \["node", "bin\/digest\.js", "serve"\]$/m);
    const engines = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    for (const [, major] of docker.matchAll(/^FROM node:(\d+)/gm)) expect(semver.satisfies(`${major}.12.0`, engines)).toBe(true);
  });

  it('engines admits Node 20.19, 22 and 24, and no dependency blocks them', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; dependencies: Record<string, string> };
    for (const v of ['20.19.0', '22.12.0', '24.0.0', process.versions.node]) expect(semver.satisfies(v, pkg.engines.node), v).toBe(true);
    for (const name of Object.keys(pkg.dependencies)) {
      const dep = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { engines?: { node?: string } };
      const range = dep.engines?.node;
      if (!range) continue;
      for (const v of ['22.12.0', '24.0.0']) expect(semver.satisfies(v, range), `${name} engines ${range} on ${v}`).toBe(true);
    }
  });
});
