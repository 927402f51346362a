// Security headers on every answer. Pages load only their own CSS and JS; nothing from elsewhere.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Pages of this site: own assets only, same-origin fetch for the topic preview, forms post here. */
export const PAGE_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'self'",
].join('; ');

/** A rendered digest (web view): its inline email styles, no scripts, no external loads. */
export const DIGEST_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "img-src 'self' data:",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'self'",
].join('; ');

/**
 * Strict-Transport-Security when PUBLIC_URL is https: a browser that saw the site once never tries it over
 * plain http again (a network in between cannot strip TLS and read the tokens in links). One year, this
 * host only: subdomains may be other services the operator does not run over https.
 */
export const HSTS = 'max-age=31536000';

/** The onSend hook; `https`: PUBLIC_URL is https (HSTS is sent). */
export function securityHeaders(https: boolean) {
  return async (req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (https) reply.header('strict-transport-security', HSTS);
    return pageHeaders(req, reply, payload);
  };
}

async function pageHeaders(_req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  // A route may set a stricter or different policy of its own (digest view, local inbox).
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', PAGE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'SAMEORIGIN');
  // Links carry tokens: never leak them to another site through the Referer header.
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=(), interest-cohort=()');
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  return payload;
}
