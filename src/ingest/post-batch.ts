// One batch posted to POST /api/batches: check the format and body, read it with the same reader as
// `digest ingest` (detect.ts), and store it (ingest.ts, or postgres/ingest.ts with DATABASE_URL). The route
// only checks the token and answers.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import type { IncomingBatch } from '../types.ts';
import { FEED_FORMATS, parseFeed, type FeedFormat } from './detect.ts';
import { ingestBatch, type IngestResult } from './ingest.ts';

export interface PostedBatch {
  body: unknown;
  format?: string | undefined;
  source?: string | undefined;
  date?: string | undefined;
}

export type PostBatchResult = IngestResult & { source: string; date: string };

function isFeedFormat(s: string): s is FeedFormat {
  return (FEED_FORMATS as readonly string[]).includes(s);
}

/** Parses and ingests one posted body into SQLite; throws AppError (BAD_FORMAT, BATCH_EMPTY, or the reader's) naming the fault. */
export function postBatch(db: Db, clock: Clock, posted: PostedBatch): PostBatchResult {
  const batch = readPostedBatch(posted);
  return { ...ingestBatch(db, batch, clock), source: batch.source, date: batch.date };
}

/** The posted body as a batch, whatever the store; throws AppError (BAD_FORMAT, BATCH_EMPTY, or the reader's) naming the fault. */
export function readPostedBatch(posted: PostedBatch): IncomingBatch {
  const format = posted.format ?? 'auto';
  if (!isFeedFormat(format)) throw new AppError('BAD_FORMAT', `format: must be one of ${FEED_FORMATS.join(', ')}`);
  if (typeof posted.body !== 'string' || posted.body.trim() === '') {
    throw new AppError('BATCH_EMPTY', 'the request body is empty: send the batch as JSON or XML');
  }
  return parseFeed(posted.body, format, { source: posted.source, date: posted.date });
}
