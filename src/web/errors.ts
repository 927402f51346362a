// One error handler for every route: AppError.status with its message, as a page or as JSON.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { storageFault, type StorageFault } from '../db/faults.ts';
import { isAppError } from '../errors.ts';
import type { Pages } from './pages.ts';
import { sendMessage, wantsJson } from './respond.ts';

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
    return { status: err.status, code: err.code, message: err.message, action, retryAfter: err.retryInSeconds };
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
