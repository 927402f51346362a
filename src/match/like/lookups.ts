// Looking like: examples up on arXiv for the web, without letting one anonymous request become an
// amplifier. One object per process (src/main.ts):
// - a request may name at most LIKE_LOOKUPS_PER_REQUEST examples the database lacks (more: 400);
// - lookups run in the background, one process-wide queue of at most LIKE_QUEUE_MAX ids (full: 503), each
//   through the fetch code and the spacer the paper sources share, so arXiv's one-request-per-3-seconds
//   rule holds for the whole process; the same id asked twice is looked up once;
// - a request waits at most LIKE_LOOKUP_WAIT_MS (10 s); past that it answers 503 with Retry-After, the lookup goes on,
//   and the example it stores (like_examples) is there when the reader tries again;
// - an id arXiv does not know is remembered for LIKE_UNKNOWN_TTL_MS and refused without asking again.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/open.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { LIKE_UNKNOWN, missingExamples, storeExample, unknownExample, type ExampleFetcher } from './like.ts';

export const LIKE_LOOKUPS_PER_REQUEST = 3;
export const LIKE_QUEUE_MAX = 20;
export const LIKE_UNKNOWN_TTL_MS = 3_600_000;
/** Unknown ids remembered at most (oldest forgotten first). */
const UNKNOWN_MAX = 10_000;

/** Where examples are known and kept: the SQLite file (db), or PostgreSQL (match/postgres/like-examples.ts). */
export interface ExampleStore {
  /** Ids of `ids` that are neither papers nor stored examples. */
  missing(ids: readonly string[]): string[] | Promise<string[]>;
  /** Keeps one looked-up example (never in papers); a second store of it changes nothing. */
  store(id: string, got: { title: string; abstract: string }, now: Date): void | Promise<void>;
}

export interface LikeLookupsDeps {
  /** The SQLite store, unless `store` is given. */
  db?: Db;
  store?: ExampleStore;
  clock: Clock;
  logger: Logger;
  fetcher: ExampleFetcher;
  /** How long a request waits for its lookups (LIKE_LOOKUP_WAIT_MS). */
  waitMs: number;
}

type Outcome = { found: true } | { found: false } | { error: Error };

export interface LikeLookups {
  /** Resolves once every example is in the database; throws a 400 or 503 AppError naming the id otherwise. */
  ensure(ids: readonly string[]): Promise<void>;
  /** Lookups queued or running (for tests and metrics). */
  pending(): number;
}

export function createLikeLookups(deps: LikeLookupsDeps): LikeLookups {
  const { clock, logger, fetcher } = deps;
  const db = deps.db;
  const examples: ExampleStore = deps.store ?? { missing: (ids) => missingExamples(db!, ids), store: (id, got, now) => storeExample(db!, id, got, now) };
  const { waitMs } = deps;
  const inFlight = new Map<string, Promise<Outcome>>();
  const unknownUntil = new Map<string, number>();

  function lookUp(id: string): Promise<Outcome> {
    const running = inFlight.get(id);
    if (running) return running;
    if (inFlight.size >= LIKE_QUEUE_MAX) throw busy(`${inFlight.size} papers are being looked up on arXiv already`);
    const job = (async (): Promise<Outcome> => {
      try {
        const got = await fetcher(id);
        if (got === null || got.title.trim() === '') {
          rememberUnknown(id);
          return { found: false };
        }
        await examples.store(id, got, clock.now());
        return { found: true };
      } catch (e) {
        logger.warn({ id, err: (e as Error).message }, 'like: arXiv lookup failed');
        return { error: e as Error };
      } finally {
        inFlight.delete(id);
      }
    })();
    inFlight.set(id, job);
    return job;
  }

  function rememberUnknown(id: string): void {
    if (unknownUntil.size >= UNKNOWN_MAX) unknownUntil.delete(unknownUntil.keys().next().value!);
    unknownUntil.set(id, clock.now().getTime() + LIKE_UNKNOWN_TTL_MS);
  }

  function knownUnknown(id: string): boolean {
    const until = unknownUntil.get(id);
    if (until === undefined) return false;
    if (until > clock.now().getTime()) return true;
    unknownUntil.delete(id);
    return false;
  }

  return {
    pending: () => inFlight.size,
    async ensure(ids) {
      const missing = await examples.missing(ids);
      if (missing.length === 0) return;
      if (missing.length > LIKE_LOOKUPS_PER_REQUEST) {
        throw new AppError(
          'LIKE_TOO_MANY',
          `like: ${missing.length} example papers are not in this digest's database; at most ${LIKE_LOOKUPS_PER_REQUEST} can be looked up on arXiv at a time (save those first, then add more)`,
          { where: { field: 'topics' } },
        );
      }
      const unknown = missing.find(knownUnknown);
      if (unknown !== undefined) throw unknownExample(unknown, 'arXiv does not know it either');
      const jobs = missing.map((id) => lookUp(id).then((outcome) => ({ id, outcome })));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
      const done = await Promise.race([Promise.all(jobs), late]).finally(() => clearTimeout(timer));
      if (done === 'late') throw busy(`still looking ${missing.map((id) => `like:${id}`).join(', ')} up on arXiv`);
      for (const { id, outcome } of done) {
        if ('error' in outcome) {
          throw new AppError(LIKE_UNKNOWN, `like:${id}: paper ${id} is not in this digest's database and arXiv could not be asked (${outcome.error.message}); try again later`, {
            temporary: true,
            cause: outcome.error,
            retryInSeconds: 60,
          });
        }
        if (!outcome.found) throw unknownExample(id, 'arXiv does not know it either');
      }
    },
  };
}

function busy(why: string): AppError {
  return new AppError('LIKE_BUSY', `like: ${why}; try again in a minute (nothing was saved)`, {
    temporary: true,
    retryInSeconds: 60,
    where: { field: 'topics' },
  });
}
