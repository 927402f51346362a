// Reads what `digest ingest <file-or-url>` names: a local file, or an http(s) URL fetched with the
// same retrying fetch as the sources. The format is detected unless given.
import { readFile } from 'node:fs/promises';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { IncomingBatch } from '../types.ts';
import { parseFeed, type FeedFormat } from './detect.ts';
import { fetchText, type HostSpacer } from './fetch.ts';
import type { SourceSettings } from './source-kinds/registry.ts';
import { sourceSpacer } from './sources.ts';

export interface LoadDeps {
  config: SourceSettings;
  logger: Logger;
  /** Not read today; kept so callers pass the same deps everywhere. */
  clock?: Clock;
  /** Source name to record instead of the input's own. */
  source?: string;
  /** Day of the batch when the input does not say (or to override it). */
  date?: string;
  spacer?: HostSpacer;
  fetch?: typeof fetch;
  /** First retry delay (tests make it short). */
  backoffMs?: number;
}

/** For a Hugging Face daily-papers URL (…/daily_papers?date=2025-11-24), the day it asks for. */
function dateFromUrl(url: URL): string | undefined {
  return url.searchParams.get('date') ?? undefined;
}

/**
 * Reads a file or fetches a URL and parses it (see parseFeed). Errors are AppErrors with one line:
 * INPUT_NOT_FOUND, INPUT_FETCH_FAILED (with the HTTP status), FETCH_* (network), BATCH_INVALID, FEED_MALFORMED…
 */
export async function loadInput(pathOrUrl: string, format: FeedFormat, deps: LoadDeps): Promise<IncomingBatch> {
  const opts = { source: deps.source, date: deps.date, includeCrossLists: deps.config.ARXIV_INCLUDE_CROSSLISTS };
  if (/^https?:\/\//i.test(pathOrUrl)) {
    const url = new URL(pathOrUrl);
    const r = await fetchText(url.href, {
      timeoutMs: deps.config.FETCH_TIMEOUT_MS,
      retries: deps.config.FETCH_RETRIES,
      logger: deps.logger,
      spacer: deps.spacer ?? sourceSpacer(deps.config),
      fetch: deps.fetch,
      backoffMs: deps.backoffMs,
    });
    if (r.status < 200 || r.status >= 300) {
      throw new AppError('INPUT_FETCH_FAILED', `GET ${url.href} answered HTTP ${r.status}: ${r.text.replace(/\s+/g, ' ').slice(0, 200)}`);
    }
    return parseFeed(r.text, format, { ...opts, date: opts.date ?? dateFromUrl(url) });
  }
  let text: string;
  try {
    text = await readFile(pathOrUrl, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : String(code ?? e);
    throw new AppError('INPUT_NOT_FOUND', `Cannot read ${pathOrUrl}: ${why}`, { cause: e });
  }
  return parseFeed(text, format, opts);
}
