// per-digest CPU on a kept bench database: npx tsx /tmp/pd.ts DIR [n]
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createApp } from '../src/main.ts';
import { systemClock } from '../src/clock.ts';
import { createLogger } from '../src/log.ts';
import { measurePerDigest } from './per-digest.ts';
const dir = process.argv[2]!;
const config = loadConfig({ DATABASE_PATH: join(dir, 'bench.sqlite'), SMTP_URL: 'smtp://127.0.0.1:1', SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789', PUBLIC_URL: 'https://digest.bench.example', MAIL_FROM: 'Paper Digest <digest@bench.example>', DIGEST_TZ: 'UTC', LOG_LEVEL: 'warn' });
const app = await createApp(config, { clock: systemClock, logger: createLogger('warn') });
for (let r = 0; r < 3; r++) {
  const c = measurePerDigest({ db: app.db, links: app.links, renderer: app.renderer, from: 'Paper Digest <digest@bench.example>' }, Number(process.argv[3] ?? 1000));
  console.log(`load ${c.loadMs.toFixed(3)} render ${c.renderMs.toFixed(3)} build ${c.buildMs.toFixed(3)} ms; ${Math.round(c.messageBytes/1024)} KB; full ${c.fullPapers.toFixed(1)} compact ${c.compactPapers.toFixed(1)}`);
}
await app.close();
