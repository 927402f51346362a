// The web view of a digest PostgreSQL's workers sent (GET /digests/:token with DATABASE_URL=postgres://…):
// the row the token names, copied with what it reads into an in-memory mirror (the worker's
// send/postgres/batch-mirror.ts) and loaded there by the SQLite loader: the same page as on SQLite, from one
// renderer. Decision: mirrors are pooled, not their rows. Building a mirror's schema was ~20 ms of CPU, the
// bulk of a view (BENCHMARKS.md "The web view on PostgreSQL"); a pooled one is emptied after each view, so
// every view copies the rows as they are now (no cache to refresh, nothing another instance lacks), and a
// view has its mirror to itself while it awaits PostgreSQL (another view's copy or emptying never meets it).
// README "Running on more than one machine".
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { answerDbLoss } from '../../db/postgres/retry.ts';
import type { Links } from '../../links.ts';
import { BatchMirror } from '../../send/postgres/batch-mirror.ts';
import type { Tokens } from '../../tokens.ts';
import type { DigestViews } from '../open-digest.ts';
import { viewOf } from '../open-digest.ts';
import { resolveLinkPg, WEB_VIEW_KINDS } from '../records/link-tokens.ts';

export interface MirrorPoolLimits {
  /** Idle mirrors kept between views (more at once are built for the burst, then closed). */
  idle: number;
  /** A mirror holding more than this many bytes after a view (a huge digest's pages) is closed, not kept. */
  maxBytes: number;
}

/** Two idle mirrors (~0.3 MB each, empty: the schema's pages) serve views in turn and a second at once; 8 MB bounds each. */
export const WEB_VIEW_MIRRORS: MirrorPoolLimits = { idle: 2, maxBytes: 8 * 1024 * 1024 };

/** Emptied mirrors, reused by the next view; each view has one to itself while it prepares and takes. */
export class MirrorPool {
  private readonly idle: BatchMirror[] = [];

  constructor(
    private readonly make: () => BatchMirror,
    private readonly limits: MirrorPoolLimits = WEB_VIEW_MIRRORS,
  ) {}

  async with<T>(fn: (mirror: BatchMirror) => Promise<T>): Promise<T> {
    const mirror = this.idle.pop() ?? this.make();
    try {
      return await fn(mirror);
    } finally {
      this.giveBack(mirror);
    }
  }

  /** Mirrors kept now, and their bytes (the bench and tests read them). */
  held(): { mirrors: number; bytes: number } {
    return { mirrors: this.idle.length, bytes: this.idle.reduce((n, m) => n + m.bytes(), 0) };
  }

  close(): void {
    for (const m of this.idle.splice(0)) m.close();
  }

  private giveBack(mirror: BatchMirror): void {
    try {
      mirror.empty();
      if (this.idle.length < this.limits.idle && mirror.bytes() <= this.limits.maxBytes) {
        this.idle.push(mirror);
        return;
      }
    } catch {
      // A mirror that cannot be emptied is not reused.
    }
    mirror.close();
  }
}

export function createPostgresDigestViews(deps: { pool: pg.Pool; clock: Clock; tokens: Tokens; links: Links; mirrors?: MirrorPoolLimits }): DigestViews {
  const { pool, clock, tokens, links } = deps;
  const mirrors = new MirrorPool(() => new BatchMirror(pool, links), deps.mirrors);
  return {
    engine: 'postgres',
    open: (token) =>
      answerDbLoss(async () => {
        const { subscriber, targetId } = await resolveLinkPg(pool, tokens, clock, token, WEB_VIEW_KINDS);
        return mirrors.with(async (mirror) => {
          await mirror.prepare([targetId!]);
          return viewOf(mirror.take(targetId!, undefined), subscriber.id);
        });
      }),
  };
}
