// "Why no email today?": what the subscriber's last slot did, in words, for the preferences
// page and `digest status <email>`. Read-only; a handful of indexed queries for one subscriber.
// The words are made here for both engines; PostgreSQL's reads are report/postgres/why-no-email.ts.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { paperDaysLabel } from '../render/render-format.ts';
import { plural } from '../words.ts';

export interface LastSlotReport {
  /** Subscriber-local date of the last slot, or null when none ran yet. */
  slot: string | null;
  /** True when that slot planned an email. */
  sent: boolean;
  /** That email's ledger state (planned, sending, sent, retry, failed, unknown, suppressed), when it planned one. */
  state?: string;
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

/** The subscriber's columns the report reads (both engines). */
export interface SlotSubscriber {
  status: string;
  pausedUntil: string | null;
  lastSlot: string | null;
  lastSlotAt: string | null;
  watermark: number;
}

/** What the last slot found, read only as far as the report needs (the engines' readers stop where it stops). */
export interface SlotFacts {
  /** The ledger row of that slot, when it planned one. */
  row?: { status: string; papers: number };
  /** Topics not muted (read when there was no row). */
  activeTopics?: number;
  /** The papers that slot looked at, and the quiet source days around it (read when topics were active). */
  seen?: { n: number; first: string | null; last: string | null };
  quiet?: Array<{ source: string; day: string; status: string }>;
}

/** The report when the subscriber's own columns say it all (paused, not confirmed, no slot yet); else undefined: read on. */
export function reportBeforeSlot(s: SlotSubscriber, now: Date): LastSlotReport | undefined {
  if (s.pausedUntil !== null && Date.parse(s.pausedUntil) > now.getTime()) {
    return { slot: s.lastSlot, sent: false, message: `Deliveries are paused until ${s.pausedUntil.slice(0, 16).replace('T', ' ')} UTC.` };
  }
  if (s.status !== 'confirmed') {
    return { slot: s.lastSlot, sent: false, message: s.status === 'pending' ? 'Your address is not confirmed yet.' : `No digests go to this address (${s.status}).` };
  }
  if (s.lastSlot === null || s.lastSlotAt === null) {
    return { slot: null, sent: false, message: 'No delivery has run for you yet: your first digest comes at your next delivery hour.' };
  }
  return undefined;
}

/** The report of a slot that ran (reportBeforeSlot said nothing): the one wording both engines answer with. */
export function describeLastSlot(slot: string, f: SlotFacts): LastSlotReport {
  if (f.row) return { slot, sent: true, state: f.row.status, message: `Your digest of ${DAY(slot)} listed ${plural(f.row.papers, 'paper', 'papers')} (${f.row.status}).` };
  const active = f.activeTopics ?? 0;
  if (active === 0) return { slot, sent: false, message: `No email on ${DAY(slot)}: all your topics are muted.` };
  const quiet = (f.quiet ?? []).map((q) => (q.status === 'empty' ? `no listing from ${q.source} on ${DAY(q.day)}` : `fetching ${q.source} for ${DAY(q.day)} failed`));
  const sources = quiet.length === 0 ? '' : ` (${quiet.join('; ')})`;
  const seen = f.seen ?? { n: 0, first: null, last: null };
  if (seen.n === 0) return { slot, sent: false, message: `No email on ${DAY(slot)}: no new papers had arrived since your last digest${sources}.` };
  const range = seen.first !== null && seen.last !== null ? paperDaysLabel({ first: seen.first, last: seen.last }).replace(/^papers of /, '') : '';
  const what = `the ${plural(seen.n, 'paper', 'papers')}${range === '' ? ' that arrived' : ` of ${range}`}`;
  const matched = active === 1 ? `your topic matched none of ${what}` : `none of your ${active} topics matched ${what}`;
  return { slot, sent: false, message: `No email on ${DAY(slot)}: ${matched}${sources}.` };
}

export function lastSlotReport(db: Db, subscriberId: number, now: Date): LastSlotReport | undefined {
  const s = statement(db, SQL_SUBSCRIBER).get(subscriberId) as SlotSubscriber | undefined;
  if (!s) return undefined;
  const early = reportBeforeSlot(s, now);
  if (early) return early;
  const slot = s.lastSlot!;
  const row = statement(db, SQL_ROW_OF_SLOT).get(subscriberId, slot) as { status: string; papers: number } | undefined;
  if (row) return describeLastSlot(slot, { row });
  const activeTopics = (statement(db, SQL_TOPICS).get(subscriberId) as { active: number | null }).active ?? 0;
  if (activeTopics === 0) return describeLastSlot(slot, { activeTopics });
  const seen = statement(db, SQL_PAPERS_SEEN).get({ watermark: s.watermark, at: s.lastSlotAt }) as SlotFacts['seen'];
  const quiet = statement(db, SQL_QUIET_SOURCES).all({ slot }) as SlotFacts['quiet'];
  return describeLastSlot(slot, { activeTopics, seen, quiet });
}
