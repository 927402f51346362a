// `npx tsx bench/ledger-plans.ts [DATABASE]`
//
// EXPLAIN QUERY PLAN of every SQL constant in src/ that reads or writes the digests table, against a real
// database, migrated first (default: a fresh one; or a copy of the planned database bench/ledger.ts keeps
// in $TMPDIR/bench-ledger/: a copy, as pending migrations are applied to it). No ANALYZE, as in
// production: without statistics SQLite's choice does not depend on the row counts. The SQL is read from
// the sources (`const SQL_… = \`…\``, `${NAME}` resolved from constants of src/), so a change of schema or
// of a query shows here. Lines with a SCAN of digests (a full pass over the table or one of its indexes)
// are marked. tests/integration/ledger-indexes.test.ts runs the same check.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { openDatabase, type Db } from '../src/db/open.ts';

export interface DigestsQueryPlan {
  /** e.g. src/ledger/states-sql.ts */
  file: string;
  /** The constant's name, e.g. SQL_CLAIM_NEXT. */
  name: string;
  /** EXPLAIN QUERY PLAN lines, indented by depth; undefined when the SQL could not be resolved or prepared. */
  plan?: string[];
  error?: string;
  /** Plan lines that walk all of digests (table or index). */
  scans: string[];
}

const ROOT = join(import.meta.dirname, '..', 'src');

function sourceFiles(dir: string, into: string[] = []): string[] {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    // postgres/ folders hold PostgreSQL's dialect of the same names: planned by PostgreSQL, not here.
    if (statSync(p).isDirectory()) {
      if (f !== 'postgres') sourceFiles(p, into);
    }
    else if (p.endsWith('.ts')) into.push(p);
  }
  return into;
}

/** The plans of every SQL constant of src/ that names the digests table. */
export function digestsQueryPlans(db: Db): DigestsQueryPlan[] {
  // Every constant of src/ with a literal value (template, string or number), for ${NAME} substitution.
  const constants = new Map<string, string>();
  const sqlOf: { file: string; name: string; raw: string }[] = [];
  for (const file of sourceFiles(ROOT)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:export )?const ([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(`(?:[^`\\]|\\.)*`|'(?:[^'\\]|\\.)*'|[0-9_.]+)\s*;/g)) {
      const [, name, value] = m as unknown as [string, string, string];
      const raw = /^[0-9]/.test(value) ? value.replace(/_/g, '') : value.slice(1, -1);
      constants.set(name, raw);
      if (name.startsWith('SQL') || name.endsWith('_SQL')) sqlOf.push({ file: relative(join(ROOT, '..'), file), name, raw });
    }
  }
  const resolve = (sql: string, depth = 0): string =>
    depth > 5 ? sql : sql.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, n: string) => resolve(constants.get(n) ?? `\${${n}}`, depth + 1));

  // The planner's temp tables, for the statements that read them.
  for (const { raw } of sqlOf) if (/^\s*CREATE TEMP/i.test(raw)) db.exec(resolve(raw));

  const plans: DigestsQueryPlan[] = [];
  for (const { file, name, raw } of sqlOf) {
    const sql = resolve(raw);
    if (!/\b(FROM|UPDATE|INTO|JOIN)\s+digests\b/i.test(sql)) continue;
    if (sql.includes('${')) {
      plans.push({ file, name, error: 'not resolved (built at run time)', scans: [] });
      continue;
    }
    try {
      const stmt = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
      const named: Record<string, null> = {};
      for (const p of sql.matchAll(/[:@$]([A-Za-z_][A-Za-z0-9_]*)/g)) named[p[1]!] = null;
      const rows = (Object.keys(named).length > 0 ? stmt.all(named) : stmt.all(...(sql.match(/\?/g) ?? []).map(() => null))) as {
        id: number;
        parent: number;
        detail: string;
      }[];
      const depth = new Map<number, number>([[0, 0]]);
      const plan = rows.map((r) => {
        const d = (depth.get(r.parent) ?? 0) + 1;
        depth.set(r.id, d);
        return `${'  '.repeat(d - 1)}${r.detail}`;
      });
      plans.push({ file, name, plan, scans: rows.map((r) => r.detail).filter((l) => /^SCAN (d|digests)\b/.test(l)) });
    } catch (e) {
      plans.push({ file, name, error: (e as Error).message, scans: [] });
    }
  }
  return plans;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const path = process.argv[2] ?? ':memory:';
  const db = openDatabase(path, { checkWritable: false });
  let scans = 0;
  for (const p of digestsQueryPlans(db)) {
    process.stdout.write(`${p.file} ${p.name}${p.error ? `: ${p.error}` : ''}\n`);
    for (const l of p.plan ?? []) process.stdout.write(`${/^\s*SCAN (d|digests)\b/.test(l) ? '!!' : '  '}  ${l}\n`);
    scans += p.scans.length;
  }
  process.stdout.write(`${scans} SCAN of digests\n`);
  db.close();
}
