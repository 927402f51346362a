// `digest import`: a real CSV file streamed into a real SQLite file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { silentLogger } from '../../src/log.ts';
import { importSubscribersCsv, type ImportApp } from '../../src/subscribers/import.ts';

let dir: string;
let db: Db;
let app: ImportApp;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'digest-import-'));
  db = openDatabase(join(dir, 'digest.sqlite'));
  app = {
    db,
    clock: new ManualClock('2025-11-25T08:00:00Z'),
    logger: silentLogger,
    config: { DIGEST_TZ: 'Europe/Paris', DIGEST_HOUR: 7 },
  };
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function csv(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

function count(table: string): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

function subscriber(email: string) {
  return db.prepare(`SELECT id, status, watermark, timezone, delivery_hour AS hour FROM subscribers WHERE email = ?`).get(email) as
    | { id: number; status: string; watermark: number; timezone: string; hour: number }
    | undefined;
}

function topicsOf(email: string): string[] {
  return (
    db
      .prepare(`SELECT t.text FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE s.email = ? ORDER BY t.position`)
      .all(email) as Array<{ text: string }>
  ).map((r) => r.text);
}

async function importError(file: string): Promise<string> {
  const e = await importSubscribersCsv(app, file).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, 'the import should have been refused').toBeInstanceOf(Error);
  return (e as Error).message;
}

function expectNothingWritten(): void {
  expect(count('subscribers')).toBe(0);
  expect(count('topics')).toBe(0);
  expect(count('queries')).toBe(0);
}

describe('importSubscribersCsv', () => {
  it('imports new subscribers: confirmed rows confirmed, the others pending, topics split on ;', async () => {
    const file = csv(
      'list.csv',
      '\uFEFFEmail,Topics,Confirmed\r\n' +
        'ada@example.org,"reinforcement learning; ""self-play""",yes\r\n' +
        'bob@Example.ORG,diffusion OR flow,\r\n' +
        '\r\n' +
        '"carol@example.org","mixture of experts;multi-agent;  ;-survey token*",true\r\n',
    );
    const r = await importSubscribersCsv(app, file);
    expect(r).toEqual({ imported: 3, created: 3, updated: 0, keptOptedOut: 0, notes: [], noted: 0 });
    expect(subscriber('ada@example.org')).toMatchObject({ status: 'confirmed', timezone: 'Europe/Paris', hour: 7 });
    expect(subscriber('bob@example.org')?.status).toBe('pending');
    expect(subscriber('carol@example.org')?.status).toBe('confirmed');
    expect(topicsOf('ada@example.org')).toEqual(['reinforcement learning', '"self-play"']);
    expect(topicsOf('carol@example.org')).toEqual(['mixture of experts', 'multi-agent', '-survey token*']);
    // Shared queries are stored once.
    expect(count('queries')).toBe(6);
    // Quotes inside an unquoted field, as people write them by hand, are kept.
    await importSubscribersCsv(app, csv('hand.csv', 'email,topics\ndan@example.org,rl;"self-play" OR "multi-agent"\n'));
    expect(topicsOf('dan@example.org')).toEqual(['rl', '"self-play" OR "multi-agent"']);
  });

  it('refuses a file with a bad row at line 3, names the line, and writes nothing', async () => {
    const file = csv(
      'bad.csv',
      'email,topics\n' + 'ada@example.org,reinforcement learning\n' + 'not-an-address,diffusion\n' + 'bob@example.org,flow\n',
    );
    const message = await importError(file);
    expect(message).toMatch(/line 3: email: "not-an-address" is not a valid email address/);
    expect(message).toMatch(/nothing was imported/);
    expectNothingWritten();
  });

  it('names the line of a bad topic, of a bad confirmed value and of a short row, counting blank lines', async () => {
    expect(await importError(csv('a.csv', 'email,topics\n\nada@example.org,"(unbalanced"\n'))).toMatch(/line 3: .*topic 1/);
    expect(await importError(csv('b.csv', 'email,topics,confirmed\nada@example.org,rl,maybe\n'))).toMatch(
      /line 2: confirmed: "maybe"/,
    );
    expect(await importError(csv('c.csv', 'email,topics,confirmed\nada@example.org,rl,yes\nbob@example.org\n'))).toMatch(
      /line 3: expected 3 fields/,
    );
    expect(await importError(csv('d.csv', 'email,topics\nada@example.org, ; \n'))).toMatch(/line 2: topics: at least one topic/);
    expectNothingWritten();
  });

  it('refuses an address given twice, naming both lines, and reports how many rows are bad', async () => {
    const message = await importError(
      csv('dup.csv', 'email,topics\nada@example.org,rl\nbob@example.org,rl\nADA@example.org,diffusion\nnope,rl\n'),
    );
    expect(message).toMatch(/line 4: email: ADA@example.org is already on line 2/);
    expect(message).toMatch(/and 1 more bad row/);
    expectNothingWritten();
  });

  it('requires a header row naming email and topics', async () => {
    expect(await importError(csv('h.csv', 'ada@example.org,rl\n'))).toMatch(/line 1: no email or topics column in the header/);
    expect(await importError(csv('e.csv', ''))).toMatch(/the file is empty/);
    expect(await importError(csv('q.csv', 'email,topics\nada@example.org,"rl\n'))).toMatch(/line \d+: not valid CSV/);
    expect(await importError(join(dir, 'missing.csv'))).toMatch(/missing\.csv: cannot read the file/);
    expectNothingWritten();
  });

  it('imports 10,000 rows in transactions of a few thousand', async () => {
    const lines = ['email,topics,confirmed'];
    const pool = ['reinforcement learning', '"large language models"', 'diffusion OR flow', 'multi-agent', 'token*', 'vision'];
    for (let i = 0; i < 10_000; i++) {
      const topics = `${pool[i % 6]};${pool[(i * 7 + 1) % 6]}`.replaceAll('"', '""');
      lines.push(`user${i}@bench.example,"${topics}",${i % 2 === 0 ? 'true' : 'false'}`);
    }
    // Counted, not timed: the write transactions, from the import's own 'chunk written' lines.
    const chunks: number[] = [];
    const logger = pino({ level: 'debug' }, {
      write: (line: string) => void (line.includes('chunk written') && chunks.push((JSON.parse(line) as { chunk: number }).chunk)),
    });
    const r = await importSubscribersCsv({ ...app, logger }, csv('10k.csv', lines.join('\n')), { rowsPerTransaction: 3_000 });
    expect(chunks).toEqual([3_000, 3_000, 3_000, 1_000]);
    expect(r).toEqual({ imported: 10_000, created: 10_000, updated: 0, keptOptedOut: 0, notes: [], noted: 0 });
    expect(count('subscribers')).toBe(10_000);
    expect((db.prepare(`SELECT count(*) AS n FROM subscribers WHERE status = 'confirmed'`).get() as { n: number }).n).toBe(5_000);
    expect(count('queries')).toBe(6);
    expect(topicsOf('user9999@bench.example')).toEqual([pool[9999 % 6], pool[(9999 * 7 + 1) % 6]].filter((t, i, a) => a.indexOf(t) === i));
  });

  it('re-import replaces topics, keeps status unless the row confirms, never re-subscribes an opt-out', async () => {
    await importSubscribersCsv(
      app,
      csv('first.csv', 'email,topics,confirmed\nada@example.org,rl;vision,no\nbob@example.org,rl,yes\ncarol@example.org,rl,yes\n'),
    );
    const bobId = subscriber('bob@example.org')!.id;
    db.prepare(`UPDATE subscribers SET status = 'unsubscribed' WHERE email = 'carol@example.org'`).run();
    const r = await importSubscribersCsv(
      app,
      csv(
        'second.csv',
        'topics,email,confirmed,name\n' +
          'diffusion,ada@example.org,yes,Ada\n' +
          'vision;rl,BOB@example.org,no,Bob\n' +
          'diffusion,carol@example.org,yes,Carol\n' +
          'rl,dan@example.org,,Dan\n',
      ),
    );
    // Even a raw status change is in the history (the trigger), so the import names the row and why.
    expect(r).toEqual({
      imported: 4,
      created: 1,
      updated: 3,
      keptOptedOut: 1,
      notes: [{ line: 4, message: expect.stringMatching(/^carol@example\.org: opted out \(unsubscribe on \d{4}-\d\d-\d\d\): not confirmed$/) }],
      noted: 1,
    });
    expect(subscriber('ada@example.org')?.status).toBe('confirmed');
    expect(topicsOf('ada@example.org')).toEqual(['diffusion']);
    expect(subscriber('bob@example.org')).toMatchObject({ id: bobId, status: 'confirmed' });
    expect(topicsOf('bob@example.org')).toEqual(['vision', 'rl']);
    expect(subscriber('carol@example.org')?.status).toBe('unsubscribed');
    expect(subscriber('dan@example.org')?.status).toBe('pending');
    expect(count('subscribers')).toBe(4);
  });

  it('stops with the line and the rows already imported when the database stays locked; importing again finishes', async () => {
    const file = csv('busy.csv', 'email,topics\na@example.org,rl\nb@example.org,rl\nc@example.org,rl\nd@example.org,rl\ne@example.org,rl\n');
    const other = new Database(join(dir, 'digest.sqlite'));
    db.pragma('busy_timeout = 50');
    let locked = false;
    // After the first chunk is committed, another process takes the write lock and keeps it.
    const logger = pino({ level: 'debug' }, {
      write(line: string) {
        if (!locked && line.includes('chunk written')) {
          other.exec('BEGIN IMMEDIATE');
          locked = true;
        }
      },
    });
    const e = await importSubscribersCsv({ ...app, logger }, file, { rowsPerTransaction: 2 }).catch((err: unknown) => err);
    expect((e as Error).message).toMatch(/busy\.csv line 4: writing stopped .*the 2 rows before it are imported, run the same import again/);
    expect(count('subscribers')).toBe(2);
    other.exec('ROLLBACK');
    other.close();
    expect(await importSubscribersCsv(app, file)).toMatchObject({ imported: 5, created: 3, updated: 2 });
  });

  it('gives confirmed rows the same starting watermark as a confirmation link does', async () => {
    // Papers 1-2 ingested on the 24th, paper 3 on the 25th. A subscriber confirmed now gets the last
    // day of ingest (paper 3) in the first digest, not the whole archive.
    const before = '2025-11-24T06:00:00.000Z';
    const at = '2025-11-25T06:00:00.000Z';
    const batch = db.prepare(
      `INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at) VALUES ('test', ?, ?, 1, 1, ?)`,
    );
    const paper = db.prepare(
      `INSERT INTO papers (paper_key, title, abstract, url, first_batch_id, created_at, updated_at) VALUES (?, 't', 'a', 'https://x.org', ?, ?, ?)`,
    );
    const b1 = Number(batch.run('2025-11-24', 'h1', at).lastInsertRowid);
    const b2 = Number(batch.run('2025-11-25', 'h2', at).lastInsertRowid);
    paper.run('p1', b1, before, before);
    const p2 = Number(paper.run('p2', b1, before, before).lastInsertRowid);
    paper.run('p3', b2, at, at);
    await importSubscribersCsv(app, csv('w.csv', 'email,topics,confirmed\nada@example.org,rl,yes\nbob@example.org,rl,no\n'));
    expect(subscriber('ada@example.org')?.watermark).toBe(p2);
    expect(subscriber('bob@example.org')?.watermark).toBe(0);
  });
});
