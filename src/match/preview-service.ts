// What a topic being typed would have matched lately, for the topic builder on the subscribe and
// preferences pages (GET /api/topics/preview): the count, a papers-a-day volume, the first few papers with
// the words that matched, or the query's error and where it is. The web layer only turns the highlight
// segments into HTML.
import { utcDate, type Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { isAppError } from '../errors.ts';
import { LIKE_UNKNOWN } from './like/like.ts';
import { createHighlighter, type Segment } from './highlight.ts';
import { previewTopicDetails } from './matcher.ts';
import { TOPIC_INVALID } from './parse.ts';

/** "Recent": the days up to the newest batch day. */
export const PREVIEW_DAYS = 14;
/** Papers shown. */
export const PREVIEW_LIMIT = 5;
/** "Volume before subscribing": the papers-a-day figure covers this many days. */
export const VOLUME_DAYS = 30;

export type TopicPreview =
  | {
      ok: true;
      total: number;
      /** Papers a day the topic would have brought over the last VOLUME_DAYS days (one decimal). */
      perDay?: number;
      papers: Array<{ title: string; url: string; titleSegments: Segment[]; abstractSegments: Segment[] }>;
      /**
       * The first batch day the answer counts, when the papers held (PostgreSQL's mirror under
       * PREVIEW_MIRROR_MB) begin after the first of the VOLUME_DAYS: perDay is then over the days held, and
       * `total` counts from there when the days asked reach further back.
       */
      from?: string;
    }
  | {
      ok: false;
      error: string;
      /** 1-based character position in the query, when the parser names one. */
      position: number | null;
    };

export interface PreviewOpts {
  /** How far back "recent" goes (default PREVIEW_DAYS; the confirmation page asks for a few). */
  days?: number;
  /** The first batch day whose papers the database holds, when it holds only the newest (match/postgres/preview.ts). */
  coveredFrom?: string;
}

export interface TopicPreviewService {
  /** SQLite's answers at once; PostgreSQL's after checking its papers (match/postgres/preview.ts). */
  preview(query: string, opts?: PreviewOpts): TopicPreview | Promise<TopicPreview>;
}

/** Newest batch day: "recent" means the days up to it, so a quiet source or the sample data still previews. */
const SQL_NEWEST_BATCH_DAY = `SELECT max(date) AS day FROM batches`;

export function createTopicPreviewService(deps: { db: Db; clock: Clock }): TopicPreviewService {
  return { preview: (query, opts) => previewIn(deps.db, deps.clock, query, opts) };
}

/**
 * The preview over one SQLite database holding the papers: the SQLite file, or PostgreSQL's papers
 * mirrored into memory (match/postgres/preview.ts), so both engines answer with the same statements.
 */
export function previewIn(db: Db, clock: Clock, query: string, opts: PreviewOpts = {}): TopicPreview {
  const since = (days: number): string => {
    const today = utcDate(clock.now());
    const newest = statement<[], { day: string | null }>(db, SQL_NEWEST_BATCH_DAY).get()?.day ?? null;
    const anchor = newest !== null && newest < today ? newest : today;
    return utcDate(new Date(Date.parse(`${anchor}T00:00:00Z`) - days * 86_400_000));
  };
  if (query.trim() === '') return { ok: true, total: 0, papers: [] };
  const sinceDay = since(opts.days ?? PREVIEW_DAYS);
  const volumeSince = since(VOLUME_DAYS);
  // Papers held only from coveredFrom: the answer says so, and papers a day are over the days held.
  const cut = opts.coveredFrom !== undefined && opts.coveredFrom > volumeSince ? opts.coveredFrom : undefined;
  const volumeDays = cut === undefined ? VOLUME_DAYS : Math.max(1, (Date.parse(`${since(0)}T00:00:00Z`) - Date.parse(`${cut}T00:00:00Z`)) / 86_400_000 + 1);
  let result;
  try {
    result = previewTopicDetails(db, query, { since: sinceDay, limit: PREVIEW_LIMIT, volumeSince });
  } catch (e) {
    // A query that does not parse, or a like: naming an unknown paper: the builder shows it in place.
    if (isAppError(e) && (e.code === TOPIC_INVALID || e.code === LIKE_UNKNOWN)) {
      return { ok: false, error: e.message, position: e.where.position ?? null };
    }
    throw e;
  }
  const highlight = createHighlighter([result.highlight]);
  return {
    ok: true,
    total: result.total,
    perDay: Math.round(((result.volume ?? 0) / volumeDays) * 10) / 10,
    ...(cut === undefined ? {} : { from: cut }),
    papers: result.papers.map((p) => ({
      title: p.title,
      url: p.url,
      titleSegments: highlight(p.title),
      abstractSegments: highlight(p.abstract),
    })),
  };
}
