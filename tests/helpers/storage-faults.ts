// Storage faults made for real, for tests: another process holding SQLite's write lock, a small tmpfs
// that fills up, a read-only bind mount. Mounts need root (CAP_SYS_ADMIN); without it they return
// undefined and the test says why it skips.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './delivery-setup.ts';

export interface LockHolder {
  /** Resolves when the holder committed and exited. */
  released: Promise<void>;
  /** Ends the hold now (kills the process: SQLite drops its lock). */
  kill(): void;
}

// Plain better-sqlite3 in another process: BEGIN EXCLUSIVE plus a write, held for `ms`, then COMMIT.
const HOLDER = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.pragma('busy_timeout = 10000');
db.exec('BEGIN EXCLUSIVE');
db.prepare("INSERT INTO settings (key, value) VALUES ('lock_holder', 'x') ON CONFLICT (key) DO UPDATE SET value = excluded.value").run();
process.stdout.write('locked\\n');
setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(process.argv[2]));
`;

/** Another process takes the database's write lock (BEGIN EXCLUSIVE) and holds it `ms`. Resolves once held. */
export async function holdWriteLock(dbPath: string, ms: number): Promise<LockHolder> {
  const child = spawn(process.execPath, ['-e', HOLDER, dbPath, String(ms)], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const released = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      if (c.toString().includes('locked')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`lock holder exited (${code}) before locking: ${err}`)));
  });
  return { released, kill: () => child.kill('SIGKILL') };
}

export interface Mount {
  dir: string;
  unmount(): void;
}

function mountable(): boolean {
  return process.getuid?.() === 0;
}

/**
 * A fresh folder with something mounted on it by `commands` (each a `mount` argument list), or undefined
 * when this process may not mount or a command fails (what was mounted is undone).
 */
function mountAt(prefix: string, commands: string[][]): Mount | undefined {
  if (!mountable()) return undefined;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const unmount = () => {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    } catch {
      // was not mounted
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const args of commands) execFileSync('mount', [...args, dir], { stdio: 'ignore' });
  } catch {
    unmount();
    return undefined;
  }
  return { dir, unmount };
}

/** A tmpfs of `sizeKb` on a fresh folder, or undefined when this process may not mount. */
export function smallTmpfs(sizeKb: number): Mount | undefined {
  return mountAt('digest-full-', [['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs']]);
}

/** A read-only view (bind mount, ro) of `source` at a fresh folder, or undefined when not possible. */
export function readOnlyView(source: string): Mount | undefined {
  return mountAt('digest-ro-', [['--bind', source], ['-o', 'remount,bind,ro']]);
}

/** Fills the file system holding `dir` (a filler file written until ENOSPC). Returns a function that frees it. */
export function fillDisk(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'filler.bin');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  // Whatever smaller piece still fits, too.
  try {
    for (;;) writeSync(fd, chunk.subarray(0, 512));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  closeSync(fd);
  return () => unlinkSync(path);
}
