// The real digest of a claimed row on PostgreSQL, built as the SQLite send loop builds it (send-loop.ts):
// the same loader (over the batch's mirror, batch-mirror.ts), the same renderer and the same mail
// (digest-mail.ts: Message-ID, List-Unsubscribe, VERP envelope), links signed with the same secret and
// PUBLIC_URL as `digest serve`'s. A subscriber no longer confirmed when the batch is read is never mailed.
import type pg from 'pg';
import { sharedSecret } from '../../db/postgres/settings.ts';
import { systemClock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { errorMessage } from '../../errors.ts';
import { Links } from '../../links.ts';
import type { Logger } from '../../log.ts';
import type { OutgoingMail } from '../../mail/types.ts';
import type { ClaimedDigest } from '../../ledger/postgres/ledger.ts';
import { createRenderer, type Renderer } from '../../render/render.ts';
import { Tokens } from '../../tokens.ts';
import { DigestMails } from '../digest-mail.ts';
import { BatchMirror } from './batch-mirror.ts';

/** What a claimed row comes to: a mail to hand the relay, or why nothing is sent. */
export type BuiltDigest =
  | { kind: 'mail'; mail: OutgoingMail; release: (() => void) | undefined }
  /** The subscriber is no longer confirmed: never sent. */
  | { kind: 'skip'; status: string }
  /** The row was deleted since the claim (subscriber erased): nothing to record. */
  | { kind: 'gone' }
  /** Unreadable row or render error: failed, not retried. */
  | { kind: 'broken'; reason: string };

/** The worker's source of messages (worker.ts): `prepare` per claimed batch, then `build` per row, synchronously. */
export interface DigestSource {
  prepare(rows: readonly ClaimedDigest[]): Promise<void>;
  build(row: ClaimedDigest): BuiltDigest;
  close(): void;
}

/** The link secret: SECRET_KEY, else the one stored in the database, made once by whichever process comes first (as main.ts on SQLite). */
export async function linkSecret(pool: pg.Pool, config: Pick<Config, 'SECRET_KEY'>, logger: Logger): Promise<string> {
  if (config.SECRET_KEY) return config.SECRET_KEY;
  const { secret, generated } = await sharedSecret(pool);
  if (generated) logger.warn('SECRET_KEY is not set: generated one and stored it in the database (set SECRET_KEY in production)');
  return secret;
}

/** `renderer`: the process's own when it has one (`digest run` has the app's), made with the same settings. */
export async function createPgDigests(pool: pg.Pool, config: Config, logger: Logger, renderer?: Renderer): Promise<DigestSource> {
  const links = new Links(config.PUBLIC_URL, new Tokens(await linkSecret(pool, config, logger)), systemClock);
  renderer ??= await createRenderer({
    logger,
    fullPapers: config.DIGEST_FULL_PAPERS,
    cardCacheBytes: config.RENDER_CACHE_MB * 1024 * 1024,
  });
  return new PgDigests(new BatchMirror(pool, links), renderer, new DigestMails(config));
}

class PgDigests implements DigestSource {
  constructor(
    private readonly mirror: BatchMirror,
    private readonly renderer: Renderer,
    private readonly mails: DigestMails,
  ) {}

  prepare(rows: readonly ClaimedDigest[]): Promise<void> {
    return this.mirror.prepare(rows.map((r) => r.id));
  }

  /** Load, consent check, render, mail: as send-loop.ts start() does, in one synchronous call. */
  build(row: ClaimedDigest): BuiltDigest {
    let loaded;
    try {
      loaded = this.mirror.take(row.id, this.renderer.emailPapers);
    } catch (e) {
      return { kind: 'broken', reason: `cannot load the digest: ${errorMessage(e)}` };
    }
    if (!loaded) return { kind: 'gone' };
    if (loaded.subscriber.status !== 'confirmed') return { kind: 'skip', status: loaded.subscriber.status };
    try {
      const mail = this.renderer.digest(loaded.view);
      return { kind: 'mail', mail: this.mails.of(loaded, mail), release: mail.release?.bind(mail) };
    } catch (e) {
      return { kind: 'broken', reason: `render failed: ${errorMessage(e)}` };
    }
  }

  close(): void {
    this.mirror.close();
  }
}
