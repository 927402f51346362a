// "Why no email today?": what the subscriber's last slot did, in words, for the preferences
// page and `digest status <email>`. Read-only; a handful of indexed queries for one subscriber.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { paperDaysLabel } from '../render/render-format.ts';
import { plural } from '../words.ts';

export interface LastSlotReport {
  /** Subscriber-local date of the last slot, or null when none ran yet. */
  slot: string | null;
  /** True when that slot planned an email. */
  sent: boolean;
  /** One or two sentences for a person. */
  message: string;
}

const SQL_SUBSCRIBER = `
  SELECT id, status, paused_until AS pausedUntil, last_slot AS lastSlot, last_slot_at AS lastSlotAt, watermark
  FROM subscribers WHERE id = ?`;
const SQL_ROW_OF_SLOT = `SELECT status, paper_count AS papers FROM digests WHERE subscriber_id = ? AND edition = ?`;
const SQL_TOPICS = `SELECT count(*) AS total, sum(muted = 0) AS active FROM topics WHERE subscriber_id = ?`;
/** The papers that slot looked at: above the watermark, ingested by the time it ran, with their batch days. */
const SQL_PAPERS_SEEN = `
  SELECT count(*) AS n, min(b.date) AS first, max(b.date) AS last
  FROM papers p JOIN batches b ON b.id = p.first_batch_id
  WHERE p.id > @watermark AND p.created_at <= @at`;
/** Source days around the slot that brought nothing (no listing, or an error). */
const SQL_QUIET_SOURCES = `
  SELECT source, day, status FROM source_days
  WHERE day BETWEEN date(@slot, '-1 day') AND @slot AND status IN ('empty', 'error')
  ORDER BY day, source`;

const DAY = (d: string): string => paperDaysLabel({ first: d, last: d }).replace(/^papers of /, '');

export function lastSlotReport(db: Db, subscriberId: number, now: Date): LastSlotReport | undefined {
  const s = statement(db, SQL_SUBSCRIBER).get(subscriberId) as
    | { status: string; pausedUntil: string | null; lastSlot: string | null; lastSlotAt: string | null; watermark: number }
    | undefined;
  if (!s) return undefined;
  if (s.pausedUntil !== null && Date.parse(s.pausedUntil) > now.getTime()) {
    return { slot: s.lastSlot, sent: false, message: `Deliveries are paused until ${s.pausedUntil.slice(0, 16).replace('T', ' ')} UTC.` };
  }
  if (s.status !== 'confirmed') {
    return { slot: s.lastSlot, sent: false, message: s.status === 'pending' ? 'Your address is not confirmed yet.' : `No digests go to this address (${s.status}).` };
  }
  if (s.lastSlot === null || s.lastSlotAt === null) {
    return { slot: null, sent: false, message: 'No delivery has run for you yet: your first digest comes at your next delivery hour.' };
  }
  const row = statement(db, SQL_ROW_OF_SLOT).get(subscriberId, s.lastSlot) as { status: string; papers: number } | undefined;
  if (row) {
    return { slot: s.lastSlot, sent: true, message: `Your digest of ${DAY(s.lastSlot)} listed ${plural(row.papers, 'paper', 'papers')} (${row.status}).` };
  }
  const topics = statement(db, SQL_TOPICS).get(subscriberId) as { total: number; active: number | null };
  if ((topics.active ?? 0) === 0) {
    return { slot: s.lastSlot, sent: false, message: `No email on ${DAY(s.lastSlot)}: all your topics are muted.` };
  }
  const seen = statement(db, SQL_PAPERS_SEEN).get({ watermark: s.watermark, at: s.lastSlotAt }) as { n: number; first: string | null; last: string | null };
  const quiet = (statement(db, SQL_QUIET_SOURCES).all({ slot: s.lastSlot }) as Array<{ source: string; day: string; status: string }>).map(
    (q) => (q.status === 'empty' ? `no listing from ${q.source} on ${DAY(q.day)}` : `fetching ${q.source} for ${DAY(q.day)} failed`),
  );
  const sources = quiet.length === 0 ? '' : ` (${quiet.join('; ')})`;
  if (seen.n === 0) {
    return { slot: s.lastSlot, sent: false, message: `No email on ${DAY(s.lastSlot)}: no new papers had arrived since your last digest${sources}.` };
  }
  const range = seen.first !== null && seen.last !== null ? paperDaysLabel({ first: seen.first, last: seen.last }).replace(/^papers of /, '') : '';
  const what = `the ${plural(seen.n, 'paper', 'papers')}${range === '' ? ' that arrived' : ` of ${range}`}`;
  const active = topics.active ?? 0;
  const matched = active === 1 ? `your topic matched none of ${what}` : `none of your ${active} topics matched ${what}`;
  return { slot: s.lastSlot, sent: false, message: `No email on ${DAY(s.lastSlot)}: ${matched}${sources}.` };
}
