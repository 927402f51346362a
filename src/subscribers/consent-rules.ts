// Where consent is decided, as pure functions both engines' writes follow (subscription-writes.ts on
// SQLite, postgres/door-writes.ts on PostgreSQL): what a subscribe request may do to an address given
// its row and its opt-out history, and whether a clicked confirmation link may confirm it.
import { describeOptOuts, personMayReverse, type ConsentEvent } from '../consent/history.ts';
import type { NoticeKind } from '../notices/repo.ts';
import type { SubscriberStatus } from '../types.ts';
import type { SubscribeOutcome } from './types.ts';

export type SubscribeStep =
  /** The operator's path on an address with an opt-out: refused (lift it first). */
  | { kind: 'refuse' }
  /** Nothing is written; `notice` is the email it may lead to. */
  | { kind: 'nothing'; outcome: SubscribeOutcome; status: SubscriberStatus; notice?: NoticeKind }
  /** An unsubscribed address: the request is stored apart, the row stays unsubscribed. */
  | { kind: 'resubscribe-request' }
  /** A new or pending address (or the operator's path): its row, preferences and topics. */
  | { kind: 'write' };

export function subscribeStep(existing: { status: SubscriberStatus } | undefined, active: readonly ConsentEvent[], admin: boolean): SubscribeStep {
  const left = existing?.status === 'unsubscribed' || existing?.status === 'suppressed';
  if (admin && (active.length > 0 || left)) return { kind: 'refuse' };
  if (existing?.status === 'confirmed' && !admin) return { kind: 'nothing', outcome: 'already-confirmed', status: 'confirmed', notice: 'already-subscribed' };
  if (existing?.status === 'suppressed' || !personMayReverse(active)) {
    return { kind: 'nothing', outcome: 'opted-out', status: existing?.status ?? active[active.length - 1]?.status ?? 'suppressed' };
  }
  if (existing?.status === 'unsubscribed') return { kind: 'resubscribe-request' };
  return { kind: 'write' };
}

/** Whether a confirmation link may confirm this address at all (complaints, bounces, suppression: never). */
export function mayConfirm(status: SubscriberStatus, active: readonly ConsentEvent[]): boolean {
  return status !== 'suppressed' && personMayReverse(active);
}

/** An unsubscribed address comes back only through a link signed after its re-subscribe request. */
export function linkAfterRequest(request: { requestedAt: string } | undefined, issuedAt: number): boolean {
  return request !== undefined && issuedAt >= Date.parse(request.requestedAt) - 1000;
}

/** A confirmation that reverses an opt-out is written in the history. */
export function reconfirmation(status: SubscriberStatus, active: readonly ConsentEvent[]): boolean {
  return active.length > 0 || status === 'unsubscribed';
}

export const RECONFIRMED_DETAIL = 'the person clicked a confirmation link they asked for';

/** What an imported CSV row may do to an address, given its row and its opt-out history (import-write.ts, operator/postgres/import.ts). */
export interface ImportRowStep {
  /** 'none': the address was deleted after it opted out, and is not created again. */
  write: 'create' | 'update' | 'none';
  /** The address has an opt-out: never confirmed nor made pending again (the row is reported by line). */
  keptOptedOut: boolean;
  /** Only a pending address with no opt-out is confirmed by an import. */
  confirm: boolean;
}

export function importRowStep(existing: { status: SubscriberStatus } | undefined, active: readonly ConsentEvent[], wantsConfirmed: boolean): ImportRowStep {
  const left = existing?.status === 'unsubscribed' || existing?.status === 'suppressed';
  const write = existing ? 'update' : active.length > 0 ? 'none' : 'create';
  const status = existing?.status ?? 'pending';
  return { write, keptOptedOut: left || active.length > 0, confirm: wantsConfirmed && status === 'pending' && active.length === 0 };
}

/** The import's line about a row kept opted out: `<address>: opted out (complaint on 2025-11-25): not confirmed`. */
export function keptOptedOutNote(email: string, existing: { status: SubscriberStatus } | undefined, active: readonly ConsentEvent[]): string {
  return `${email}: opted out (${active.length > 0 ? describeOptOuts(active) : String(existing?.status)}): not confirmed`;
}
