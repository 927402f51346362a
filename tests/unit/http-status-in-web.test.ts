// HTTP statuses are decided in src/web/ from error codes (src/web/errors.ts STATUS_BY_CODE): services
// throw AppErrors with a code and never name a status. This scans src outside web/ for a status set on a
// reply or an error, and names each file and line that does.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const WEB = join(SRC, 'web');

/** A status literal in an error's options, a reply's status, Fastify's statusCode, or a status argument to a page. */
const SETS_STATUS = [
  /\bstatus:\s*[1-5]\d\d\b/,
  /\bstatusCode\b/,
  /\bhttpStatus\b/,
  /\breply\.(code|status)\(/,
  /\b(page|sendPage|sendMessage|sendAdmin)\(.*,\s*[1-5]\d\d\)/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === WEB ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('HTTP statuses are decided in src/web/', () => {
  it('no file outside src/web/ sets an HTTP status', () => {
    const found: string[] = [];
    for (const file of sourceFiles(SRC)) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (SETS_STATUS.some((re) => re.test(line))) found.push(`src/${relative(SRC, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found, 'give the error a code and map it in src/web/errors.ts STATUS_BY_CODE').toEqual([]);
  });
});
