// @fastify/rate-limit's counters kept in the shared limits (src/db/shared-limits.ts) instead of its
// default in-process LRU: every `digest serve` on one store counts the same hits, so N instances behind a
// load balancer allow what one does. The plugin keeps its hooks, keys (client address), 429 answers and
// headers; only where a count lives changes. Windows follow the service's clock (tests move it).
import type { FastifyRateLimitOptions, FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Clock } from '../clock.ts';
import type { SharedLimits } from '../db/shared-limits.ts';

type Incr = FastifyRateLimitStore['incr'];
type RouteOptions = Parameters<FastifyRateLimitStore['child']>[0];

/** What the rows of a route's limit are called in shared_limits: 'POST /subscribe'. */
export function limitPurpose(route: Partial<Pick<RouteOptions, 'method' | 'url'>> | undefined): string {
  const method = Array.isArray(route?.method) ? route.method.join(',') : route?.method;
  return method && route?.url ? `${method} ${route.url}` : 'global';
}

/** The store class the plugin instantiates (`store:` option); each route's child counts under its own purpose. */
export function sharedRateLimitStore(limits: SharedLimits, clock: Clock): FastifyRateLimitStoreCtor {
  class SharedRateLimitStore implements FastifyRateLimitStore {
    private readonly purpose: string;

    constructor(options?: FastifyRateLimitOptions | string) {
      this.purpose = typeof options === 'string' ? options : 'global';
    }

    incr: Incr = (key, callback, timeWindow) => {
      const now = clock.now().getTime();
      limits.hit(this.purpose, key, timeWindow, now).then(
        (r) => callback(null, { current: r.hits, ttl: Math.max(0, r.resetAtMs - now) }),
        (e: unknown) => callback(e instanceof Error ? e : new Error(String(e))),
      );
    };

    child(routeOptions: RouteOptions): FastifyRateLimitStore {
      const info = (routeOptions as { routeInfo?: Partial<RouteOptions> }).routeInfo;
      return new SharedRateLimitStore(limitPurpose(info));
    }
  }
  return SharedRateLimitStore as unknown as FastifyRateLimitStoreCtor;
}
