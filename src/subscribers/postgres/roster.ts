// The operator's `digest unsubscribe <email>` on PostgreSQL: the same write as SQLite's roster
// (subscribers/roster.ts), under the address's advisory lock like every door write; the opt-out history
// row is written by PostgreSQL's trigger on the status.
import type pg from 'pg';
import type { Logger } from '../../log.ts';
import { normaliseEmail } from '../records/email-address.ts';
import { findSubscriberByEmail, markUnsubscribed } from '../records/postgres.ts';
import { forAddress } from './common.ts';

/** False when there is no such subscriber; true when they are (now or already) unsubscribed. */
export async function unsubscribeByEmailPg(pool: pg.Pool, email: string, now: Date, logger: Logger): Promise<boolean> {
  const address = normaliseEmail(email);
  return forAddress(pool, address, async (c) => {
    const s = await findSubscriberByEmail(c, address);
    if (!s) return false;
    if (await markUnsubscribed(c, s.id, now.toISOString(), { kind: 'unsubscribe', detail: 'by the operator (digest unsubscribe)' })) {
      logger.info({ subscriberId: s.id }, 'unsubscribed by an administrator');
    }
    return true;
  });
}
