// The settings table: small facts the service keeps for itself, one text value per key. Its one module
// (db/open.ts keeps its own write probe: open.ts cannot import this file without an import cycle).
//   secret_key   generated once when SECRET_KEY is not set (main.ts), read by send threads (send/sender.ts)
//   overdue      the last tick's overdue figure, JSON (report/overdue.ts)
//   write_probe  the time of the last /health write probe (db/open.ts)
//   paper_terms.through  the highest paper id whose terms are indexed (match/paper-terms.ts)
import type { Db } from './open.ts';
import { statement } from './statements.ts';

export type SettingKey = 'secret_key' | 'overdue' | 'write_probe' | 'paper_terms.through';

const SQL_READ_SETTING = `SELECT value FROM settings WHERE key = ?`;

const SQL_WRITE_SETTING = `
  INSERT INTO settings (key, value) VALUES (@key, @value)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`;

/** The first writer wins (two processes generating a secret at once keep the same one). */
const SQL_WRITE_SETTING_ONCE = `INSERT OR IGNORE INTO settings (key, value) VALUES (@key, @value)`;

export function readSetting(db: Db, key: SettingKey): string | undefined {
  return statement<[string], { value: string }>(db, SQL_READ_SETTING).get(key)?.value;
}

export function writeSetting(db: Db, key: SettingKey, value: string): void {
  statement(db, SQL_WRITE_SETTING).run({ key, value });
}

/** Writes only when the key has no value yet; returns the value kept. */
export function writeSettingOnce(db: Db, key: SettingKey, value: string): string {
  statement(db, SQL_WRITE_SETTING_ONCE).run({ key, value });
  return readSetting(db, key)!;
}
