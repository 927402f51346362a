// One error handler for every route: the status an error's code answers with (the one table below), its
// message, as a page or as JSON. Services throw AppErrors with a code; only the web layer knows HTTP.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { storageFault, type StorageFault } from '../db/faults.ts';
import { isAppError, type AppError } from '../errors.ts';
import type { Pages } from './pages.ts';
import { sendMessage, wantsJson } from './respond.ts';

/**
 * The HTTP status of each error code that is not a plain 400 (bad input), and of a code whose temporary
 * form (the same request may work later) answers otherwise.
 */
const STATUS_BY_CODE: Record<string, number | { permanent: number; temporary: number }> = {
  NOT_FOUND: 404,
  DIGEST_GONE: 404,
  NOT_OPTED_OUT: 404,
  ADMIN_LOGIN_REQUIRED: 401,
  WEBHOOK_REFUSED: 401,
  LINK_INVALID: 403,
  ADMIN_CSRF: 403,
  UNSUBSCRIBED: 409,
  OPTED_OUT: 409,
  TOPICS_FULL: 409,
  LINK_EXPIRED: 410,
  DIGEST_EXPIRED: 410,
  PAPER_GONE: 410,
  TOPIC_GONE: 410,
  FEED_GONE: 410,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  IMPORT_FAILED: 500,
  CONFIRM_EMAIL_FAILED: 502,
  MAIL_TEMPORARY: 502,
  MAIL_PERMANENT: 502,
  MAIL_CONNECTION: 502,
  MAIL_AMBIGUOUS: 502,
  LIKE_BUSY: 503,
  LIKE_UNKNOWN: { permanent: 400, temporary: 503 },
  WEBHOOK_CERT: 503,
  RELAY_DOWN: 503,
  SOURCES_FAILED: 503,
  DB_FAULT: 503,
  LIMITS_STORE_UNAVAILABLE: 503,
  DB_LOCKED: 503,
  DB_FULL: 503,
  DB_READONLY: 503,
  DB_IO: 503,
  DB_UNREACHABLE: 503,
};

/** The HTTP status an AppError answers with: its code's entry in STATUS_BY_CODE, else 400. */
export function httpStatus(err: AppError): number {
  const s = STATUS_BY_CODE[err.code] ?? 400;
  return typeof s === 'number' ? s : err.temporary ? s.temporary : s.permanent;
}

const TITLES: Record<string, string> = {
  LINK_INVALID: 'This link is not valid',
  LINK_EXPIRED: 'This link has expired',
  DIGEST_EXPIRED: 'This link has expired',
  RATE_LIMITED: 'Too many requests',
  TOPIC_GONE: 'Topic no longer there',
  DIGEST_GONE: 'Digest not found',
  NOT_FOUND: 'Page not found',
  UNSUBSCRIBED: 'You are unsubscribed',
  DB_LOCKED: 'Busy right now',
  DB_FULL: 'Temporarily unavailable',
  DB_READONLY: 'Temporarily unavailable',
  DB_IO: 'Temporarily unavailable',
  DB_UNREACHABLE: 'Temporarily unavailable',
};

const HINTS: Record<string, string> = {
  LINK_INVALID: 'Links in our emails only work exactly as sent. If the address was cut across two lines, copy all of it.',
  LINK_EXPIRED: 'Confirmation links work for 7 days.',
};

const ACTIONS: Record<string, { actionUrl: string; actionLabel: string }> = {
  LINK_EXPIRED: { actionUrl: '/', actionLabel: 'Subscribe again' },
  UNSUBSCRIBED: { actionUrl: '/', actionLabel: 'Subscribe again' },
  ADMIN_LOGIN_REQUIRED: { actionUrl: '/admin/login', actionLabel: 'Log in' },
  ADMIN_CSRF: { actionUrl: '/admin', actionLabel: 'Back to the console' },
};

interface Described {
  status: number;
  code: string;
  message: string;
  /** Seconds, for a Retry-After header (503 only). */
  retryAfter?: number;
  /** The page's button, when the error names one of its own (AppError.action). */
  action?: { actionUrl: string; actionLabel: string };
}

/** What the visitor reads when the database cannot take their change (the cause goes to the log). */
const STORAGE_MESSAGE = 'We could not save this just now. Nothing was changed; please try again in a moment.';

function describe(err: FastifyError | Error): Described {
  // SQLITE_BUSY / LOCKED / FULL / READONLY / IOERR: retryable, never a 500 (see db/faults.ts).
  const fault = storageFault(err);
  if (fault) return { status: 503, code: fault.fault, message: STORAGE_MESSAGE, retryAfter: fault.retryAfterSeconds };
  if (isAppError(err)) {
    const action = err.action && { actionUrl: err.action.url, actionLabel: err.action.label };
    return { status: httpStatus(err), code: err.code, message: err.message, action, retryAfter: err.retryInSeconds };
  }
  if (hasZodFastifySchemaValidationErrors(err)) {
    const first = err.validation[0];
    const where = first ? `${first.instancePath.replace(/^\//, '').replace(/\//g, '.') || err.validationContext || 'request'}` : 'request';
    return { status: 400, code: 'REQUEST_INVALID', message: `${where}: ${first?.message ?? 'invalid value'}` };
  }
  const status = (err as FastifyError).statusCode ?? 500;
  if (status === 429) return { status, code: 'RATE_LIMITED', message: err.message };
  if (status >= 400 && status < 500) return { status, code: (err as FastifyError).code ?? 'BAD_REQUEST', message: err.message };
  return { status: 500, code: 'INTERNAL', message: 'Something went wrong on our side. Please try again in a few minutes.' };
}

/** `onStorageFault`: told of every storage fault a request met (GET /health answers a full disk from it). */
export function createErrorHandler(pages: Pages, onStorageFault?: (fault: StorageFault) => void) {
  return function handleError(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
    const d = describe(err);
    const fault = storageFault(err);
    if (fault) onStorageFault?.(fault);
    if (d.retryAfter !== undefined) {
      reply.header('retry-after', String(d.retryAfter));
      req.log.warn({ code: d.code, reason: fault?.message }, 'request refused: the database cannot be written now');
    } else if (d.status >= 500) req.log.error({ err, code: d.code }, 'request failed');
    else req.log.info({ code: d.code, status: d.status, reason: d.message }, 'request refused');
    if (wantsJson(req)) return reply.code(d.status).send({ ok: false, code: d.code, error: d.message });
    const title = TITLES[d.code] ?? (d.status >= 500 ? 'Something went wrong' : 'This did not work');
    return sendMessage(reply, pages, d.status, { title, message: d.message, hint: HINTS[d.code], ...(d.action ?? ACTIONS[d.code]) });
  };
}

export function notFoundHandler(pages: Pages) {
  return function notFound(req: FastifyRequest, reply: FastifyReply) {
    const message = `There is no page at ${req.url.split('?')[0]}.`;
    if (wantsJson(req)) return reply.code(404).send({ ok: false, code: 'NOT_FOUND', error: message });
    return sendMessage(reply, pages, 404, { title: TITLES.NOT_FOUND!, message });
  };
}
