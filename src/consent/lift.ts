// The operator lifts an address's opt-outs (console, `digest unsuppress`), with a reason that is recorded
// in its history. The row goes back to confirmed when the address had confirmed before, else pending.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import { normaliseEmail } from '../subscribers/records/email-address.ts';
import { deleteResubscribeRequest, findSubscriberByEmail, liftOptOutStatus } from '../subscribers/records/repo.ts';
import type { SubscriberStatus } from '../types.ts';
import { activeOptOuts, recordConsentEvent, type ConsentEvent } from './history.ts';

export interface LiftResult {
  email: string;
  /** The opt-outs lifted (oldest first). */
  lifted: ConsentEvent[];
  /** The subscriber's status now; undefined when the address has no row (deleted): only its history changed. */
  status: SubscriberStatus | undefined;
}

const MAX_REASON = 500;

/** The operator's reason, trimmed; a 400 naming the field when it is missing or too long. */
export function checkLiftReason(rawReason: string): string {
  const reason = rawReason.trim();
  if (reason === '') throw new AppError('REASON_REQUIRED', 'reason: say why the opt-out is lifted (it is kept in the address\'s history)', { where: { field: 'reason' } });
  if (reason.length > MAX_REASON) throw new AppError('REASON_TOO_LONG', `reason: at most ${MAX_REASON} characters`, { where: { field: 'reason' } });
  return reason;
}

/**
 * Whether the row goes back (it left: unsubscribed or suppressed); throws NOT_OPTED_OUT when the address
 * has nothing to lift. Both engines' lifts decide here.
 */
export function liftApplies(email: string, row: { status: SubscriberStatus } | undefined, active: readonly ConsentEvent[]): boolean {
  const left = row?.status === 'unsubscribed' || row?.status === 'suppressed';
  if (active.length === 0 && !left) {
    throw new AppError('NOT_OPTED_OUT', `${email} has no opt-out to lift${row ? ` (it is ${row.status})` : ''}`);
  }
  return left;
}

export function liftOptOut(db: Db, clock: Clock, rawEmail: string, rawReason: string): LiftResult {
  const email = normaliseEmail(rawEmail);
  const reason = checkLiftReason(rawReason);
  return db.transaction((): LiftResult => {
    const active = activeOptOuts(db, email);
    const row = findSubscriberByEmail(db, email);
    const left = liftApplies(email, row, active);
    const at = clock.now().toISOString();
    recordConsentEvent(db, { email, kind: 'lifted', status: null, detail: reason, at });
    let status = row?.status;
    if (row && left) {
      status = liftOptOutStatus(db, row.id) ?? row.status;
      deleteResubscribeRequest(db, row.id);
    }
    return { email: row?.email ?? email, lifted: active, status };
  }).immediate();
}
