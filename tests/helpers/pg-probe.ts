// Where the PostgreSQL tests look for a server, and one short probe of it (no vitest import: the
// global setup uses this in vitest's main process).
import pg from 'pg';

export const PG_TEST_URL = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '')
  ? (process.env.DATABASE_URL as string)
  : 'postgres://root@127.0.0.1:5432/test';

/** Connects once with a short timeout; '' when it answers, else the reason. */
export async function probePostgres(url = PG_TEST_URL): Promise<string> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return '';
  } catch (e) {
    const why = (e as Error).message || (e as { code?: string }).code || String(e);
    return `${url.replace(/:[^:@/]*@/, ':***@')} did not answer (${why})`;
  } finally {
    await c.end().catch(() => {});
  }
}
