// Console authentication as Fastify hooks: the session cookie (HttpOnly, SameSite=Strict, Path=/admin,
// Secure when PUBLIC_URL is https), a CSRF token on every POST (the session's; on the login form a
// double-submit token in its own short-lived cookie), and what a request without them gets.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import { constantTimeEqual, SESSION_TTL_MS, type AdminSession, type ConsoleSessions } from '../../admin/sessions.ts';

export const SESSION_COOKIE = 'digest_admin';
export const LOGIN_COOKIE = 'digest_admin_login';

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function cookie(name: string, value: string, o: { secure: boolean; maxAgeMs: number }): string {
  const attrs = [`${name}=${value}`, 'Path=/admin', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.floor(o.maxAgeMs / 1000)}`];
  if (o.secure) attrs.push('Secure');
  return attrs.join('; ');
}

/** The `_csrf` field of a urlencoded form (an object) or a multipart form (FormData). */
export function csrfField(body: unknown): string {
  if (body instanceof FormData) {
    const v = body.get('_csrf');
    return typeof v === 'string' ? v : '';
  }
  if (body && typeof body === 'object') {
    const v = (body as Record<string, unknown>)._csrf;
    return typeof v === 'string' ? v : '';
  }
  return '';
}

declare module 'fastify' {
  interface FastifyRequest {
    adminSession?: AdminSession;
  }
}

/**
 * onRequest hook of every console route but the login page: a session, checked before the body (a CSV
 * upload may be 20 MB) is read. A request without one never has its body read.
 */
export function createSessionGuard(sessions: ConsoleSessions) {
  return async function sessionGuard(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
    const session = await sessions.find(readCookie(req, SESSION_COOKIE));
    if (!session) {
      // Returning the reply ends the request here: the page's handler does not run.
      if (req.method === 'GET') return reply.redirect('/admin/login', 303);
      throw new AppError('ADMIN_LOGIN_REQUIRED', 'You are not logged in (or your session expired): log in again.');
    }
    req.adminSession = session;
  };
}

/** preHandler (after the body is read): on POST, the session's CSRF token. */
export async function csrfGuard(req: FastifyRequest): Promise<void> {
  if (req.method === 'POST' && !constantTimeEqual(csrfField(req.body), req.adminSession?.csrf ?? '')) {
    throw new AppError('ADMIN_CSRF', 'This form is out of date or did not come from the console: reload the page and try again.');
  }
}

/**
 * The console's multipart parser (the CSV upload), with the platform's FormData reader (undici). A body
 * that is not well-formed multipart is the sender's mistake: 400 naming it, never a 500.
 */
export async function parseMultipart(req: { headers: Record<string, unknown> }, body: Buffer): Promise<FormData> {
  try {
    return await new Response(body, { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
  } catch (cause) {
    throw new AppError('MULTIPART_INVALID', 'The upload is not a well-formed multipart/form-data body: send the form again from the console.', { cause });
  }
}

/** A login form's double-submit token (its cookie lives 30 minutes). */
export function newLoginToken(): string {
  return randomBytes(24).toString('base64url');
}

export const LOGIN_TOKEN_TTL_MS = 30 * 60 * 1000;
export { SESSION_TTL_MS };
