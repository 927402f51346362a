// HTTP GET for feeds on Node's global fetch: a timeout per attempt (headers and body), retries with
// exponential backoff and jitter on timeouts, 5xx, 429 and dropped connections, none on other 4xx
// (the status goes back to the caller: Hugging Face answers 400 for a day in the future), and a
// minimum spacing between requests to the same host (arXiv asks for one request every 3 s).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { retryDelayMs } from '../backoff.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { SharedLimits } from '../db/shared-limits.ts';

/** Where a spacer takes a host when more than one process must keep the spacing together. */
export type SharedSpacing = Pick<SharedLimits, 'take' | 'release'>;

/** The purpose of the spacer's rows in shared_limits (the key is the host). */
export const SPACING_PURPOSE = 'spacing';
/** How often a process waiting for a host another one is using asks again. */
const POLL_MS = 100;
/** A request's hold on a host when the caller names no timeout. */
const DEFAULT_REQUEST_MS = 60_000;

/** Called once the request ends (answered, failed or timed out). */
export type SpacingDone = () => Promise<void>;

/**
 * Spaces requests per host. One object per process (or per test), passed to fetchText; not a global.
 * Alone, it books starts one interval apart in memory. With a shared store (src/db/shared-limits.ts) the
 * spacing holds for every process on it, as arXiv asks of a client (one connection at a time, the next
 * request 3 s after the last): a request takes the host, and the next one, from any process, may take it
 * an interval after that one ended. Times are the wall clock's: the waits are real.
 */
export class HostSpacer {
  private readonly nextAt = new Map<string, number>();

  /**
   * @param intervalFor minimum milliseconds between two requests to a host (0 = no spacing)
   * @param shared the store every process takes hosts in (default: this process's memory only)
   */
  constructor(
    private readonly intervalFor: (host: string) => number,
    private readonly shared?: SharedSpacing,
  ) {}

  /** Spacing per host from a table ({ 'export.arxiv.org': 3000 }); other hosts are not spaced. */
  static fromTable(table: Record<string, number>, shared?: SharedSpacing): HostSpacer {
    return new HostSpacer((host) => table[host] ?? 0, shared);
  }

  /**
   * Resolves when a request to this host may start; call the answer once it has ended, so the next one
   * starts at least one interval after it, whatever its connection and transfer times were.
   * `requestMs`: how long the request may take at most (a dead process holds the host no longer).
   */
  async wait(host: string, signal?: AbortSignal, requestMs = DEFAULT_REQUEST_MS): Promise<SpacingDone> {
    const interval = this.intervalFor(host);
    if (interval <= 0) return async () => {};
    if (this.shared) return this.takeShared(this.shared, host, interval, requestMs, signal);
    const now = Date.now();
    const at = Math.max(now, this.nextAt.get(host) ?? 0);
    this.nextAt.set(host, at + interval);
    if (at > now) await sleep(at - now, undefined, { signal });
    return async () => {
      this.nextAt.set(host, Math.max(this.nextAt.get(host) ?? 0, Date.now() + interval));
    };
  }

  private async takeShared(shared: SharedSpacing, host: string, interval: number, requestMs: number, signal?: AbortSignal): Promise<SpacingDone> {
    const holder = `${process.pid}:${randomBytes(8).toString('hex')}`;
    for (;;) {
      const now = Date.now();
      const t = await shared.take(SPACING_PURPOSE, host, requestMs + interval, now, holder);
      // A release that fails (store out of reach) is not the request's failure: the lease lapses on its own.
      if (t.taken) return () => shared.release(SPACING_PURPOSE, host, holder, Date.now() + interval).catch(() => undefined);
      // Ended: its next start is known. In flight: ask again soon (it ends before its lease does).
      const left = t.untilMs - now;
      await sleep(left <= interval ? Math.max(1, left) : POLL_MS, undefined, { signal });
    }
  }
}

export interface FetchOptions {
  /** Per attempt, for headers and body together. */
  timeoutMs: number;
  /** Attempts after the first (0 = try once). */
  retries: number;
  logger: Logger;
  signal?: AbortSignal;
  spacer?: HostSpacer;
  /** First backoff delay; doubles each retry, with jitter, capped at maxBackoffMs (default 1000 / 30000). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Refuse bodies larger than this (default 50 MB). */
  maxBytes?: number;
  /**
   * Hosts found unreachable (connection refused, unknown host) during one poll, shared by its requests:
   * the next request to such a host fails at once with the same reason instead of waiting its turn.
   */
  unreachable?: Map<string, AppError>;
  /** Another fetch implementation (tests use the real one against a local server). */
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

export interface FetchResult {
  /** 2xx or 4xx (4xx other than 429 are not retried: the caller decides what they mean). */
  status: number;
  text: string;
  url: string;
}

export const USER_AGENT = 'paper-digest/0.1 (self-hosted research paper digest)';
const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;

/** Reads the body as UTF-8 text, refusing more than maxBytes. */
async function readBody(res: Response, maxBytes: number, url: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new AppError('FETCH_TOO_LARGE', `GET ${url}: body of ${declared} bytes is over the ${maxBytes}-byte limit`);
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new AppError('FETCH_TOO_LARGE', `GET ${url}: body is over the ${maxBytes}-byte limit`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Nothing listens there, or the name does not resolve: asking again in a few seconds answers the same, so
 * the request fails at once (the next tick asks again) instead of retrying for half a minute.
 */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function networkCode(e: unknown): string | undefined {
  return (e as { cause?: { code?: string } }).cause?.code;
}

function describeNetworkError(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return e instanceof Error ? e.message : String(e);
}

/** Retry-After in ms (seconds or an HTTP date), or undefined. */
function retryAfterMs(res: Response): number | undefined {
  const h = res.headers.get('retry-after');
  if (!h) return undefined;
  const secs = Number(h);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * GET url as text. Answers 2xx and 4xx (except 429) with their status; retries the rest. After the
 * last attempt throws AppError FETCH_TIMEOUT / FETCH_FAILED / FETCH_HTTP_ERROR (temporary: true).
 * An abort through opts.signal throws FETCH_ABORTED at once.
 */
export async function fetchText(url: string, opts: FetchOptions): Promise<FetchResult> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new AppError('FETCH_BAD_URL', `Cannot fetch ${url}: only http(s) URLs`);
  }
  const doFetch = opts.fetch ?? fetch;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const base = opts.backoffMs ?? 1000;
  const cap = opts.maxBackoffMs ?? 30_000;
  let lastError: AppError | undefined;
  const known = opts.unreachable?.get(target.host);
  if (known) throw new AppError(known.code, `GET ${url}: ${known.message.slice(known.message.indexOf(': ') + 2)}`, { cause: known, temporary: true });

  for (let attempt = 0; attempt <= opts.retries; attempt++) {
    let waitHint: number | undefined;
    let done: SpacingDone | undefined;
    try {
      done = await opts.spacer?.wait(target.host, opts.signal, opts.timeoutMs);
      const timeout = AbortSignal.timeout(opts.timeoutMs);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      const res = await doFetch(url, {
        signal,
        headers: { 'user-agent': USER_AGENT, accept: '*/*', ...opts.headers },
        redirect: 'follow',
      });
      if (res.status >= 500 || res.status === 429) {
        waitHint = retryAfterMs(res);
        await res.body?.cancel().catch(() => undefined);
        lastError = new AppError('FETCH_HTTP_ERROR', `GET ${url} answered HTTP ${res.status}`, { temporary: true });
        await done?.();
      } else {
        const text = await readBody(res, maxBytes, url);
        await done?.();
        return { status: res.status, text, url: res.url || url };
      }
    } catch (e) {
      await done?.().catch(() => undefined);
      if (opts.signal?.aborted) throw new AppError('FETCH_ABORTED', `GET ${url}: aborted`, { cause: e, temporary: true });
      if (e instanceof AppError) throw e; // too large: retrying will not help
      const timedOut = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
      if (!timedOut && UNREACHABLE.has(networkCode(e) ?? '')) {
        const unreachable = new AppError('FETCH_UNREACHABLE', `GET ${url}: connection failed: ${describeNetworkError(e)}`, { cause: e, temporary: true });
        opts.unreachable?.set(target.host, unreachable);
        throw unreachable;
      }
      lastError = timedOut
        ? new AppError('FETCH_TIMEOUT', `GET ${url}: no complete answer within ${opts.timeoutMs} ms`, { cause: e, temporary: true })
        : new AppError('FETCH_FAILED', `GET ${url}: connection failed: ${describeNetworkError(e)}`, { cause: e, temporary: true });
    }
    if (attempt < opts.retries) {
      const delay = Math.min(cap, waitHint ?? retryDelayMs(attempt + 1, { baseMs: base, maxMs: cap }));
      opts.logger.warn({ url, attempt: attempt + 1, retryInMs: Math.round(delay), err: lastError.message }, 'fetch failed; retrying');
      try {
        await sleep(delay, undefined, { signal: opts.signal });
      } catch (e) {
        throw new AppError('FETCH_ABORTED', `GET ${url}: aborted`, { cause: e, temporary: true });
      }
    }
  }
  const err = lastError ?? new AppError('FETCH_FAILED', `GET ${url} failed`, { temporary: true });
  if (opts.retries > 0) err.message = `${err.message} (after ${opts.retries + 1} attempts)`;
  throw err;
}
