// The site's own static files (public/): one stylesheet and one script, read once at start.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

export const PUBLIC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'public');

const ASSETS: Record<string, string> = {
  'app.css': 'text/css; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'admin.css': 'text/css; charset=utf-8',
};

export function registerAssetRoutes(app: FastifyInstance, dir: string = PUBLIC_DIR): void {
  for (const [name, type] of Object.entries(ASSETS)) {
    const body = readFileSync(join(dir, name));
    app.get(`/assets/${name}`, async (_req, reply) =>
      reply.type(type).header('cache-control', 'public, max-age=3600').send(body),
    );
  }
  // Browsers ask for /favicon.ico on every site; we have no icon. An empty answer, cached for a day,
  // instead of a 404 in the access log and the browser console on every page.
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());
}
