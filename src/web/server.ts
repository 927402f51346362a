// The web server, built apart from listening (tests use inject or listen on port 0).
// zod validation, form bodies, per-route rate limits, security headers, one error handler.
import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { createErrorHandler, notFoundHandler } from './errors.ts';
import type { RouteDeps, WebDeps } from './deps.ts';
import { createPages } from './pages.ts';
import { retryLockedWrites } from './lock-retry.ts';
import { sharedRateLimitStore } from './rate-limit-store.ts';
import { logRequests } from './request-log.ts';
import { registerApiRoutes } from './routes/api.ts';
import { registerAssetRoutes } from './routes/assets.ts';
import { registerConfirmRoutes } from './routes/confirm.ts';
import { registerDigestViewRoutes } from './routes/digest-view.ts';
import { registerInboxRoutes } from './routes/inbox.ts';
import { newInboxToken } from './routes/inbox-guard.ts';
import { registerFeedbackRoutes } from './routes/feedback.ts';
import { registerFeedRoutes } from './routes/feed.ts';
import { registerMuteRoutes } from './routes/mute.ts';
import { registerPreferencesRoutes } from './routes/preferences.ts';
import { registerSubscribeRoutes } from './routes/subscribe.ts';
import { registerTopicPreviewRoutes } from './routes/topic-preview.ts';
import { registerUnsubscribeRoutes } from './routes/unsubscribe.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { registerAdminRoutes } from './console/routes.ts';
import { securityHeaders } from './security-headers.ts';
import { fastifyTrustProxy } from '../trust-proxy.ts';

export type { RouteDeps, WebDeps } from './deps.ts';

export function buildServer(deps: WebDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: fastifyTrustProxy(deps.trustProxy ?? deps.config.TRUST_PROXY),
    bodyLimit: 256 * 1024,
    // Fastify's own request lines would log link tokens; logRequests() logs them redacted.
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const routeDeps: RouteDeps = { ...deps, pages: deps.pages ?? createPages() };

  void app.register(formbody);
  // Counts live in the store every instance shares (SQLite file or PostgreSQL), not in this process.
  void app.register(rateLimit, { global: false, store: sharedRateLimitStore(deps.limits, deps.clock) });
  app.addHook('onSend', securityHeaders(deps.config.PUBLIC_URL.startsWith('https://')));
  logRequests(app);
  app.setErrorHandler(createErrorHandler(routeDeps.pages, deps.machine.health.noteWriteFault));
  retryLockedWrites(app, deps.config.WEB_LOCK_WAIT_MS);
  app.setNotFoundHandler(notFoundHandler(routeDeps.pages));

  // Routes go in after the plugins have loaded, so that route-level rate limits are honoured.
  void app.register(async (scope) => {
    registerAssetRoutes(scope);
    registerSubscribeRoutes(scope, routeDeps);
    registerTopicPreviewRoutes(scope, routeDeps);
    registerConfirmRoutes(scope, routeDeps);
    registerPreferencesRoutes(scope, routeDeps);
    registerUnsubscribeRoutes(scope, routeDeps);
    registerMuteRoutes(scope, routeDeps);
    registerDigestViewRoutes(scope, routeDeps);
    registerApiRoutes(scope, routeDeps);
    registerInboxRoutes(scope, { inbox: deps.inbox, config: deps.config, token: deps.inboxToken ?? newInboxToken() });
    registerWebhookRoutes(scope, routeDeps);
    registerAdminRoutes(scope, routeDeps);
    if (deps.feedback) registerFeedbackRoutes(scope, { ...routeDeps, feedback: deps.feedback });
    if (deps.feeds) registerFeedRoutes(scope, deps.feeds);
  });
  return app;
}

/**
 * Closes the server: new requests are refused and idle keep-alive connections closed at once (Fastify's
 * default); a connection still busy after `graceMs` (a client that never reads its answer) is cut, so a
 * shutdown never hangs on one client.
 */
export async function closeServer(app: FastifyInstance, graceMs = 3_000): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
