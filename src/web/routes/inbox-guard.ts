// Who may read the local mail catcher's inbox: this machine only, never behind a proxy or on a public
// interface, and only with the random token `digest serve` prints at start-up (as Jupyter does), so another
// local user or a page in the browser that guesses the port cannot read it. The token comes once in the
// URL (?token=…) and is then kept in a cookie.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { readCookie } from '../console/auth.ts';
import { hostIsLoopback, peerIsLoopback, proxyHidesPeer } from '../local-only.ts';

export const INBOX_COOKIE = 'digest_inbox';

export interface InboxGuardOptions {
  config: Pick<Config, 'TRUST_PROXY' | 'HOST'>;
  /** The token `digest serve` printed. */
  token: string;
}

function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, createHash('sha256').update(expected).digest()) && given !== '';
}

/** Why this configuration never shows the inbox, or undefined. */
export function inboxOffReason(config: Pick<Config, 'TRUST_PROXY' | 'HOST'>): string | undefined {
  const proxy = proxyHidesPeer(config);
  if (proxy) return `The local inbox is off: ${proxy}.`;
  if (!hostIsLoopback(config.HOST)) return `The local inbox is off: HOST=${config.HOST} listens beyond this machine (set HOST=localhost to read it).`;
  return undefined;
}

/** onRequest hook of the inbox routes (runs on the decoded route, whatever the URL's spelling). */
export function inboxGuard(o: InboxGuardOptions) {
  const off = inboxOffReason(o.config);
  return async function guard(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
    const refuse = (why: string) => reply.code(403).type('text/plain; charset=utf-8').send(why);
    if (off) return refuse(off);
    if (!peerIsLoopback(req)) return refuse('The local inbox is only shown to this machine.');
    const query = (req.query as Record<string, unknown> | undefined)?.token;
    if (typeof query === 'string' && sameToken(query, o.token)) {
      reply.header('set-cookie', `${INBOX_COOKIE}=${o.token}; Path=/; HttpOnly; SameSite=Strict`);
      return;
    }
    if (sameToken(readCookie(req, INBOX_COOKIE) ?? '', o.token)) return;
    return refuse('Open the local inbox with the link `digest serve` printed at start-up: it carries the inbox token.');
  };
}

/** A fresh inbox token (128 bits). */
export function newInboxToken(): string {
  return randomBytes(16).toString('base64url');
}

/** What `digest serve` prints about the inbox: its link with the token, or why it is off. */
export function localInboxLine(config: Pick<Config, 'TRUST_PROXY' | 'HOST' | 'PUBLIC_URL'>, token: string): string {
  const off = inboxOffReason(config);
  return off ?? `local inbox at ${config.PUBLIC_URL}/inbox?token=${token}`;
}
