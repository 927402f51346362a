// What "only from this machine" may rest on. The socket's peer is this machine only when no proxy stands
// in between: behind a proxy on the same host every request arrives from 127.0.0.1, and with TRUST_PROXY
// the client address is what the proxy says. So a route that is local-only refuses outright when a proxy
// is trusted, and judges the socket's peer otherwise (never req.ip, never the raw URL).
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { behindProxy } from '../trust-proxy.ts';

const LOOPBACK_PEER = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const LOOPBACK_HOST = /^(localhost|127\.\d+\.\d+\.\d+|::1|\[::1\])$/i;

/** The TCP peer is this machine (the socket's address, whatever X-Forwarded-For says). */
export function peerIsLoopback(req: FastifyRequest): boolean {
  return LOOPBACK_PEER.test(req.socket.remoteAddress ?? '');
}

export function hostIsLoopback(host: string): boolean {
  return LOOPBACK_HOST.test(host.trim());
}

/** Why the socket's peer cannot tell a local request apart here (a trusted proxy), or undefined. */
export function proxyHidesPeer(config: Pick<Config, 'TRUST_PROXY'>): string | undefined {
  return behindProxy(config.TRUST_PROXY) ? 'TRUST_PROXY is set: behind a proxy every request may look local' : undefined;
}
