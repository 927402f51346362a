// The app as production builds it (createApp, the composition root) on real parts: a SQLite file in
// a temp dir and a real local SMTP server receiving the mail. Only the clock is fake.
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { createApp, type App } from '../../src/main.ts';
import { tempDatabaseDir, withDatabase, type TempDb } from './seed.ts';
import { startSmtpCapture, type SmtpCapture } from './smtp-capture.ts';

export const TEST_SECRET = 'test-secret-key-0123456789abcdef0123456789';
export const PUBLIC_URL = 'https://digest.example.org';
export const TEST_NOW = '2025-11-25T09:00:00Z';

export interface TestApp {
  app: App;
  /** The app's own database connection and its temp directory. */
  tmp: TempDb;
  smtp: SmtpCapture;
  clock: ManualClock;
  /** Closes the app (mailer, database), the SMTP server, and deletes the temp directory. */
  close(): Promise<void>;
}

/** `env` overrides the test defaults below (any variable of src/config.ts). */
export async function startTestApp(env: Record<string, string> = {}, now = TEST_NOW, prefix = 'digest-app-'): Promise<TestApp> {
  const dir = tempDatabaseDir(prefix);
  const smtp = await startSmtpCapture();
  const clock = new ManualClock(now);
  let app: App;
  try {
    const config = loadConfig({
      DATABASE_PATH: dir.path,
      SMTP_URL: smtp.url,
      SECRET_KEY: TEST_SECRET,
      PUBLIC_URL,
      DIGEST_TZ: 'Europe/Paris',
      DIGEST_HOUR: '8',
      SMTP_POOL_SIZE: '1',
      SMTP_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'silent',
      ...env,
    });
    app = await createApp(config, { clock, logger: silentLogger });
  } catch (e) {
    await smtp.close();
    dir.remove();
    throw e;
  }
  const tmp = withDatabase(dir, app.db);
  return {
    app,
    tmp,
    smtp,
    clock,
    async close() {
      await app.close();
      await smtp.close();
      tmp.cleanup();
    },
  };
}
