// The production build (dist/) for tests that run bin/digest.js or `npm start`: rebuilt first when a
// source file is newer than the last build (a clean build, ~10 s; CI builds it in `npm ci` through `prepare`).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './delivery-setup.ts';

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
  execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'pipe', timeout: 120_000 });
}
