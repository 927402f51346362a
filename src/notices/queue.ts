// Whether a confirmation (or "already subscribed") email may be written for an address now. The limits
// are per address, whoever asks and from wherever: no mail bombing through the subscribe form.
import type { Db } from '../db/open.ts';
import { insertNotice, openNoticeFor, recentNotices, type NoticeKind } from './repo.ts';

/** Emails of this kind an address gets at most in 24 hours. */
export const NOTICES_PER_DAY = 3;
/** None while one written this recently is still live (waiting, or sent and its link still valid). */
export const NOTICE_QUIET_MS = 3600 * 1000;

export type Queued = { id: number; reused: boolean } | 'throttled';

/**
 * Writes the notice (inside the caller's transaction), or answers 'throttled'. An email of the same kind
 * still waiting to go out (the relay failed) is reused, not doubled: the caller may send it at once.
 */
export function queueNotice(db: Db, n: { subscriberId: number; email: string; kind: NoticeKind; now: Date }): Queued {
  const open = openNoticeFor(db, n.email, n.kind);
  if (open !== undefined) return { id: open, reused: true };
  if (overLimits(recentNotices(db, n.email, dayAgo(n.now)), n.now)) return 'throttled';
  return { id: insertNotice(db, { subscriberId: n.subscriberId, email: n.email, kind: n.kind, now: n.now.toISOString() }), reused: false };
}

/** The start of the 24 hours the daily limit counts. */
export function dayAgo(now: Date): string {
  return new Date(now.getTime() - 24 * 3600 * 1000).toISOString();
}

/** The per-address limits, whichever engine counted the address's recent notices. */
export function overLimits(recent: { day: number; lastLive: string | null }, now: Date): boolean {
  if (recent.day >= NOTICES_PER_DAY) return true;
  return recent.lastLive !== null && now.getTime() - Date.parse(recent.lastLive) < NOTICE_QUIET_MS;
}
