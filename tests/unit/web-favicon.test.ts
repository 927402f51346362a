// Found in a QA pass: every page logged "Failed to load resource: 404" for /favicon.ico in the
// browser console. The site has no icon; it now answers an empty, cacheable 204.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerAssetRoutes } from '../../src/web/routes/assets.ts';

describe('/favicon.ico', () => {
  it('answers 204 with no body, cached, instead of 404', async () => {
    const app = Fastify();
    registerAssetRoutes(app);
    const r = await app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(r.statusCode).toBe(204);
    expect(r.body).toBe('');
    expect(r.headers['cache-control']).toBe('public, max-age=86400');
    await app.close();
  });
});
