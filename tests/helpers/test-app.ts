// The app as production builds it (createApp, the composition root) on real parts: a SQLite file in
// a temp dir and a real local SMTP server receiving the mail. Only the clock is fake.
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import type { Db } from '../../src/db/open.ts';
import { createAppWithDb, type App, type AppOptions } from '../../src/main.ts';
import type { Config } from '../../src/config.ts';
import { tempDatabaseDir, withDatabase, type TempDb } from './seed.ts';
import { startSmtpCapture, type SmtpCapture } from './smtp-capture.ts';

export const TEST_SECRET = 'test-secret-key-0123456789abcdef0123456789';
export const PUBLIC_URL = 'https://digest.example.org';
export const TEST_NOW = '2025-11-25T09:00:00Z';

/**
 * The tests' door to the database: the app createApp builds plus the very connection its services use
 * (createAppWithDb), to seed and assert on; a second connection would not see an in-memory database.
 */
export type AppWithDb = App & { db: Db };

export async function createTestApp(config: Config, options: AppOptions = {}): Promise<AppWithDb> {
  const { app, db } = await createAppWithDb(config, options);
  return { ...app, db };
}

export interface TestApp {
  app: AppWithDb;
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
  let app: AppWithDb;
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
    app = await createTestApp(config, { clock, logger: silentLogger });
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
