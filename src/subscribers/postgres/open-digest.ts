// The web view of a digest PostgreSQL's workers sent (GET /digests/:token with DATABASE_URL=postgres://…):
// the row the token names, copied with what it reads into a private in-memory mirror (the worker's
// send/postgres/batch-mirror.ts) and loaded there by the SQLite loader: the same page as on SQLite, from one
// renderer. Decision: a mirror per request, dropped after it (a view is a rare click, ~ms to build; a
// shared one would need a lock around its prepare and take); README "Running on more than one machine".
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { answerDbLoss } from '../../db/postgres/retry.ts';
import type { Links } from '../../links.ts';
import { BatchMirror } from '../../send/postgres/batch-mirror.ts';
import type { Tokens } from '../../tokens.ts';
import type { DigestViews } from '../open-digest.ts';
import { viewOf } from '../open-digest.ts';
import { resolveLinkPg, WEB_VIEW_KINDS } from '../records/link-tokens.ts';

export function createPostgresDigestViews(deps: { pool: pg.Pool; clock: Clock; tokens: Tokens; links: Links }): DigestViews {
  const { pool, clock, tokens, links } = deps;
  return {
    engine: 'postgres',
    open: (token) =>
      answerDbLoss(async () => {
        const { subscriber, targetId } = await resolveLinkPg(pool, tokens, clock, token, WEB_VIEW_KINDS);
        const mirror = new BatchMirror(pool, links);
        try {
          await mirror.prepare([targetId!]);
          return viewOf(mirror.take(targetId!, undefined), subscriber.id);
        } finally {
          mirror.close();
        }
      }),
  };
}
