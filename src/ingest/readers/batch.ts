// Reader for the project's own batch format (see batch-schema.ts).
import { AppError } from '../../errors.ts';
import type { IncomingBatch, IncomingPaper } from '../../types.ts';
import { validateBatchFile } from '../batch-schema.ts';
import { paperKey, tidyAbstract, tidyTitle, tidyWhitespace } from '../normalize.ts';

export interface BatchReadOptions {
  /** Overrides the file's source name. */
  source?: string;
  /** Overrides the file's date. */
  date?: string;
}

/**
 * A parsed batch file as an IncomingBatch: ids normalised, text tidied. Two entries with the same
 * normalised id are refused (naming both places), as is anything the schema refuses.
 */
export function readBatchFile(value: unknown, opts: BatchReadOptions = {}): IncomingBatch {
  // `digest ingest --source/--date` stand in for a file that does not say (a list of papers alone):
  // filled in before validation, or the file is refused with "source: required" despite the options.
  const file = validateBatchFile(withDefaults(value, opts));
  const seen = new Map<string, number>();
  const papers: IncomingPaper[] = file.papers.map((p, i) => {
    const key = paperKey(p.id);
    const first = seen.get(key);
    if (first !== undefined) {
      throw new AppError('BATCH_INVALID', `Invalid batch: papers[${i}].id: ${key} is already papers[${first}]`);
    }
    seen.set(key, i);
    return {
      key,
      title: tidyTitle(p.title),
      abstract: tidyAbstract(p.abstract),
      authors: p.authors.map(tidyWhitespace),
      url: p.url,
      publishedAt: p.publishedAt ?? null,
      upvotes: p.upvotes,
      categories: p.categories,
      ...(p.codeUrl ? { codeUrl: p.codeUrl } : {}),
    };
  });
  return { source: opts.source ?? file.source, date: opts.date ?? file.date, papers };
}

function withDefaults(value: unknown, opts: BatchReadOptions): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const v = value as Record<string, unknown>;
  return {
    ...v,
    ...(v.source === undefined && opts.source !== undefined ? { source: opts.source } : {}),
    ...(v.date === undefined && opts.date !== undefined ? { date: opts.date } : {}),
  };
}
