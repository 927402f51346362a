// A real local HTTP server (node:http) that plays scripted responses per path, standing in for
// Hugging Face and arXiv in tests: slow answers, 5xx, dropped connections, truncated bodies.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedResponse {
  /** Default 200. */
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering at all. */
  delayMs?: number;
  /** Send the headers and the first half of the body, then wait this long before the rest. */
  stallBodyMs?: number;
  /** Close the connection without answering. */
  drop?: boolean;
  /** Announce the full Content-Length, send only this many bytes of the body, then close the connection. */
  dropAfterBytes?: number;
}

export interface FeedServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /**
   * Scripts the answers for a path: the exact request target (`/api/daily_papers?date=2025-11-24`) or,
   * failing that, its path alone (`/api/query`). Each request takes the next response; the last repeats.
   */
  route(target: string, ...responses: ScriptedResponse[]): void;
  /** Requests received for a target (exact request target, or path when routed by path). */
  hits(target: string): number;
  /**
   * Requests for a target whose scripted answer went out (a delayed one once its delay ran out): a client
   * that gave up before then shows 0, whatever the machine's load (the delay timer runs in this process).
   */
  answered(target: string): number;
  /** Every request, in order. */
  requests: FeedRequest[];
  close(): Promise<void>;
}

export const xml = (body: string): ScriptedResponse => ({ body, headers: { 'content-type': 'application/rss+xml; charset=utf-8' } });
export const json = (value: unknown, status = 200): ScriptedResponse => ({
  status,
  body: typeof value === 'string' ? value : JSON.stringify(value),
  headers: { 'content-type': 'application/json; charset=utf-8' },
});

interface FeedRequest {
  target: string;
  at: number;
  answered?: true;
}

const forTarget = (r: FeedRequest, target: string) => r.target === target || r.target.split('?')[0] === target;

export async function startFeedServer(): Promise<FeedServer> {
  const routes = new Map<string, ScriptedResponse[]>();
  const served = new Map<string, number>();
  const requests: FeedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  function answer(res: ServerResponse, r: ScriptedResponse): void {
    if (r.drop) {
      res.socket?.destroy();
      return;
    }
    const body = Buffer.from(r.body ?? '', 'utf8');
    res.writeHead(r.status ?? 200, { 'content-length': String(body.length), ...r.headers });
    if (r.dropAfterBytes !== undefined) {
      res.write(body.subarray(0, r.dropAfterBytes), () => res.socket?.destroy());
      return;
    }
    if (r.stallBodyMs !== undefined) {
      const half = Math.floor(body.length / 2);
      res.write(body.subarray(0, half));
      later(r.stallBodyMs, () => {
        if (!res.destroyed) res.end(body.subarray(half));
      });
      return;
    }
    res.end(body);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = req.url ?? '/';
    const path = target.split('?')[0]!;
    const request: FeedRequest = { target, at: Date.now() };
    requests.push(request);
    const key = routes.has(target) ? target : routes.has(path) ? path : undefined;
    if (key === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route for ${target}`);
      return;
    }
    const script = routes.get(key)!;
    const n = served.get(key) ?? 0;
    served.set(key, n + 1);
    const r = script[Math.min(n, script.length - 1)]!;
    const send = () => ((request.answered = true), answer(res, r));
    if (r.delayMs) later(r.delayMs, send);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    route(target, ...responses) {
      if (responses.length === 0) throw new Error('route needs at least one response');
      routes.set(target, responses);
      served.set(target, 0);
    },
    hits(target) {
      return requests.filter((r) => forTarget(r, target)).length;
    },
    answered(target) {
      return requests.filter((r) => r.answered && forTarget(r, target)).length;
    },
    requests,
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
