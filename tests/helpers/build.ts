// The production build (dist/) for tests that run bin/digest.js or `npm start`: rebuilt first when a
// source file is newer than the last build (a clean build, ~10 s; CI builds it in `npm ci` through `prepare`).
// Vitest's global setup calls it once before any test file starts: `npm run build` empties dist/ first, so a
// build started by one file while another file runs the built CLI would pull dist/ from under it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The built `digest` command (dist/, what production runs): what the tests spawn, ~4x cheaper to start than tsx. */
export const DIGEST_BIN = join(REPO_ROOT, 'bin', 'digest.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export function ensureBuilt(): void {
  // MJML's output, the build's last step (`npm run build` empties dist/, runs tsc, then compiles the
  // templates): its time is the build's. (A bare `tsc -p tsconfig.build.json` leaves it missing or stale,
  // and the service then compiles the templates at start-up, loading MJML.)
  const templatesJson = join(REPO_ROOT, 'dist', 'templates.json');
  const built = existsSync(templatesJson) ? statSync(templatesJson).mtimeMs : 0;
  const sources = Math.max(newestSource(join(REPO_ROOT, 'src')), newestSource(join(REPO_ROOT, 'templates')));
  if (built >= sources) return;
  // No time limit of its own: tsc took 4 min on the shared 2-core machine under load (a limit only fails the run).
  execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'pipe' });
}
