// `digest preview <email>` with DATABASE_URL=postgres://…: the same lines as on SQLite (cli-commands.ts
// cmdPreview), the digest made from PostgreSQL's rows (operator/postgres/preview.ts). Its links are signed
// as the workers sign theirs (SECRET_KEY, else the secret kept in PostgreSQL), so they open on any instance.
import type { CliIo } from '../../cli-io.ts';
import type { App } from '../../main.ts';

export async function previewOnPostgres(app: App, io: CliIo, email: string, o: { out?: string }): Promise<number> {
  const { config, clock, renderer } = app;
  const { createPool } = await import('../../db/postgres/pool.ts');
  const { pgStorageFault } = await import('../../db/postgres/faults.ts');
  const { sharedSecret } = await import('../../db/postgres/settings.ts');
  const { Tokens } = await import('../../tokens.ts');
  const { Links } = await import('../../links.ts');
  const { previewDigestPg } = await import('../../operator/postgres/preview.ts');
  const { cmdPreview } = await import('../../cli-commands.ts');
  const pool = createPool(config.DATABASE_URL!, { schema: config.DATABASE_SCHEMA, max: 1 });
  try {
    const secret = config.SECRET_KEY ?? (await sharedSecret(pool)).secret;
    const links = new Links(config.PUBLIC_URL, new Tokens(secret), clock);
    return await cmdPreview({ operator: { preview: (e) => previewDigestPg({ pool, clock, links, renderer }, e) } }, io, email, o);
  } catch (e) {
    throw pgStorageFault(e)?.in('DATABASE_URL') ?? e;
  } finally {
    await pool.end();
  }
}
