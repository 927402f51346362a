// Sends the digests that are due, on the web harness's engine, as the deployment would: on SQLite the
// pipeline's match -> plan -> send in this process (what `digest run` does); on PostgreSQL the built
// `digest plan --now --no-fetch` and `digest worker --once`, at the harness's clock, on its schema and SMTP
// server (what `digest serve`'s ticks and the workers do there). Returns the number of digests sent.
import { matchNew, plan, send } from '../../src/pipeline.ts';
import { childDir, digestAt } from './pg-story.ts';
import { PUBLIC_URL, TEST_SECRET } from './test-app.ts';
import type { WebHarness } from './web-harness.ts';

export async function sendDueDigests(h: WebHarness): Promise<number> {
  if (h.engine === 'sqlite') {
    matchNew(h.core.db);
    await plan(h.core, 'now');
    return (await send(h.core))?.sent ?? 0;
  }
  const env = {
    DATABASE_URL: h.config.DATABASE_URL!,
    DATABASE_SCHEMA: h.config.DATABASE_SCHEMA!,
    SECRET_KEY: TEST_SECRET,
    PUBLIC_URL: h.config.PUBLIC_URL ?? PUBLIC_URL,
    SMTP_URL: h.smtp.url,
    DIGEST_TZ: h.config.DIGEST_TZ,
  };
  const dir = childDir();
  try {
    const at = h.clock.now().toISOString();
    for (const args of [['plan', '--now', '--no-fetch'], ['worker', '--once']]) {
      const r = await digestAt(at, args, env, dir.cwd);
      if (r.code !== 0 || r.stderr) throw new Error(`digest ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      if (args[0] === 'worker') return Number(/^sent (\d+),/m.exec(r.stdout)?.[1] ?? NaN);
    }
    return 0;
  } finally {
    dir.cleanup();
  }
}
