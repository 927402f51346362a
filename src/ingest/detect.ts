// One entry point for every input format: the project's batch JSON, Hugging Face daily-papers JSON,
// arXiv RSS/Atom/API XML. `auto` tells them apart by their shape.
import { AppError } from '../errors.ts';
import type { IncomingBatch } from '../types.ts';
import { LIMITS } from './batch-schema.ts';
import { jsonErrorPlace } from './issues.ts';
import { isCalendarDate } from './normalize.ts';
import { readArxiv } from './readers/arxiv.ts';
import { readBatchFile } from './readers/batch.ts';
import { readHfDaily } from './readers/hf.ts';

export type FeedFormat = 'auto' | 'batch' | 'hf' | 'arxiv';
export const FEED_FORMATS: readonly FeedFormat[] = ['auto', 'batch', 'hf', 'arxiv'];

export interface FeedOptions {
  /** Source name to record (default: from the input: the batch's own, `hf`, `arxiv:<cats>`). */
  source?: string;
  /** YYYY-MM-DD day of the batch (default: from the input). */
  date?: string;
  /** arXiv: take cross-listings too. */
  includeCrossLists?: boolean;
}

/** Which reader a document needs, from its first characters and, for JSON, its shape. */
export function detectFormat(text: string): Exclude<FeedFormat, 'auto'> {
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('<')) return 'arxiv';
  if (start.startsWith('[')) return 'hf';
  if (start.startsWith('{')) return 'batch';
  throw new AppError('FORMAT_UNKNOWN', 'Unknown input format: expected batch JSON (an object), Hugging Face JSON (an array) or arXiv XML');
}

function checkOptions(opts: FeedOptions): void {
  if (opts.date !== undefined && !isCalendarDate(opts.date)) {
    throw new AppError('BATCH_INVALID', `Invalid batch: date: must be a date written YYYY-MM-DD, not ${JSON.stringify(opts.date)}`);
  }
  if (opts.source !== undefined && (opts.source.trim() === '' || opts.source.length > LIMITS.source)) {
    throw new AppError('BATCH_INVALID', `Invalid batch: source: must be 1 to ${LIMITS.source} characters`);
  }
}

function parseJson(text: string, format: 'batch' | 'hf'): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    const code = format === 'batch' ? 'BATCH_INVALID' : 'FEED_MALFORMED';
    throw new AppError(code, `Invalid ${format === 'batch' ? 'batch' : 'Hugging Face daily papers JSON'}: ${jsonErrorPlace(text, e)}`);
  }
}

/**
 * Reads a document in any supported format into an IncomingBatch (validated, ids normalised, text tidied).
 * Throws AppError (BATCH_INVALID, FEED_MALFORMED, FORMAT_UNKNOWN) with a one-line message naming the place.
 * The batch may be empty (an empty day); ingestBatch refuses empty batches.
 */
export function parseFeed(text: string, format: FeedFormat, opts: FeedOptions = {}): IncomingBatch {
  checkOptions(opts);
  const f = format === 'auto' ? detectFormat(text) : format;
  const source = opts.source?.trim();
  switch (f) {
    case 'batch':
      return readBatchFile(parseJson(text, 'batch'), { source, date: opts.date });
    case 'hf':
      return readHfDaily(parseJson(text, 'hf'), { source, date: opts.date });
    case 'arxiv':
      return readArxiv(text, { source, date: opts.date, includeCrossLists: opts.includeCrossLists });
    default:
      throw new AppError('BAD_FORMAT', `format: must be one of ${FEED_FORMATS.join(', ')}`);
  }
}
