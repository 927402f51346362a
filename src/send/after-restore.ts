// What a restored ledger must assume: the backup was taken at some moment, and the lost database went on
// sending after it. A row the backup does not record as sent (planned, retry, sending) may have gone out
// since; so may every slot that came due after the backup, which the backup has no row for yet. Sending
// either again would mail a reader the same edition twice. So, right after the file is restored:
//   1. every subscriber's current slot is planned as `digest run` would (mode 'now': a run after the backup
//      may have sent it, whatever the subscriber's hour), then
//   2. every open row becomes 'unknown': never sent, the watermark stays, its papers ride in the
//      subscriber's next edition (what a crash mid-send does, ledger/recover.ts). At worst a reader misses one
//      email (today's, or this week's) and sees its papers in the next; never the same edition twice.
//   3. opt-outs recorded in the database that was replaced (when it still opens) are carried over: an
//      address that unsubscribed, complained or bounced after the backup is not mailed again, and its
//      opt-out history (consent_events) comes along, even for a subscriber deleted after the backup.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { markOpenRowsUnknown } from '../ledger/index.ts';
import type { Logger } from '../log.ts';
import { planDigests } from '../plan/planner.ts';
import { matchPending } from '../match/matcher.ts';

export interface RestoreSettlement {
  /** Current slots the backup had no row for, planned now (and then marked unknown with the rest). */
  planned: number;
  /** Rows marked unknown: they may have been sent after the backup. */
  unknown: number;
  /** Addresses whose opt-out (unsubscribed, suppressed) came from the replaced database. */
  optOutsCarried: number;
}

/** Opt-outs of the replaced database (attached as `replaced`) that the backup does not have yet. */
const SQL_CARRY_OPT_OUTS = `
  UPDATE subscribers AS s
  SET status = r.status, unsubscribed_at = coalesce(r.unsubscribed_at, s.unsubscribed_at), suppressed_at = coalesce(r.suppressed_at, s.suppressed_at)
  FROM replaced.subscribers AS r
  WHERE r.email = s.email AND r.status IN ('unsubscribed', 'suppressed') AND s.status NOT IN ('unsubscribed', 'suppressed')`;

/** The replaced database's opt-out history that the backup lacks (same address, kind and moment), in order. */
const SQL_CARRY_CONSENT_EVENTS = `
  INSERT INTO consent_events (email, kind, status, detail, at)
  SELECT r.email, r.kind, r.status, r.detail, r.at FROM replaced.consent_events AS r
  WHERE NOT EXISTS (SELECT 1 FROM consent_events AS c WHERE c.email = r.email AND c.kind = r.kind AND c.at = r.at)
  ORDER BY r.id`;

const SQL_REPLACED_HAS_CONSENT = `SELECT 1 FROM replaced.sqlite_master WHERE type = 'table' AND name = 'consent_events'`;

export async function settleAfterRestore(db: Db, deps: { clock: Clock; logger: Logger; replaced?: string | undefined }): Promise<RestoreSettlement> {
  const { clock, logger } = deps;
  const optOutsCarried = deps.replaced ? carryOptOuts(db, deps.replaced, logger) : 0;
  matchPending(db);
  const plan = await planDigests(db, { clock, mode: 'now', logger });
  const response = `outcome unknown: restored from a backup, and this digest may have been sent after it was taken; not resent, papers carried to the next edition`;
  const unknown = markOpenRowsUnknown(db, response);
  return { planned: plan.planned, unknown, optOutsCarried };
}

function carryOptOuts(db: Db, replaced: string, logger: Logger): number {
  try {
    db.prepare('ATTACH DATABASE ? AS replaced').run(replaced);
  } catch (e) {
    logger.warn({ err: e, replaced }, 'restore: the replaced database does not open; its opt-outs cannot be carried over');
    return 0;
  }
  try {
    return db
      .transaction(() => {
        if (db.prepare(SQL_REPLACED_HAS_CONSENT).get() !== undefined) db.prepare(SQL_CARRY_CONSENT_EVENTS).run();
        return db.prepare(SQL_CARRY_OPT_OUTS).run().changes;
      })
      .immediate();
  } catch (e) {
    logger.warn({ err: e, replaced }, 'restore: the replaced database could not be read; its opt-outs were not carried over');
    return 0;
  } finally {
    db.exec('DETACH DATABASE replaced');
  }
}
