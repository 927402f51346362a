// The topic builder's preview on PostgreSQL keeps its in-memory mirror within PREVIEW_MIRROR_MB: past it,
// only the newest batch days that fit, and an answer reaching back before them says from which day it
// counts (papers a day over the days held); an answer within the days held is the whole mirror's. A new
// day at the next preview moves the window on (the oldest day's papers leave the mirror).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { createPostgresTopicPreview, mirrorBytes, SQL_DAY_SIZES } from '../../src/match/postgres/preview.ts';
import type { IncomingBatch } from '../../src/types.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';

const pg = await postgresForTests();
const PER_DAY = 40;
const DAYS = ['2025-11-21', '2025-11-22', '2025-11-23', '2025-11-24'];
const FILLER = 'We study sample efficiency, credit assignment and exploration in sequential decision making. '.repeat(8);

function day(date: string): IncomingBatch {
  return {
    source: 'test',
    date,
    papers: Array.from({ length: PER_DAY }, (_, i) => {
      const key = `${date.replaceAll('-', '').slice(2)}.${String(i).padStart(5, '0')}`;
      const title = i % 2 === 0 ? `Reinforcement learning agents, part ${i} of ${date}` : `Graph networks, part ${i} of ${date}`;
      return { key, title, abstract: FILLER, authors: ['Ada Lovelace'], url: `https://arxiv.org/abs/${key}`, publishedAt: date, upvotes: 0, categories: ['cs.LG'] };
    }),
  };
}

describe.skipIf(!pg.reachable)('the topic preview within PREVIEW_MIRROR_MB on PostgreSQL', () => {
  let s: TestSchema;
  const clock = new ManualClock('2025-11-25T09:00:00.000Z');
  /** A budget (MB) holding the newest two days and not three. */
  let twoDaysMb: number;

  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    for (const d of DAYS) await ingestBatchPg(s.pool, day(d), clock);
    const sizes = (await s.pool.query<{ papers: number; bytes: number }>(SQL_DAY_SIZES)).rows.map((r) => mirrorBytes(r.papers, r.bytes));
    twoDaysMb = (sizes[0]! + sizes[1]! + sizes[2]! / 2) / 1024 / 1024;
  });
  afterAll(async () => s?.drop());

  it('holds the newest days that fit; an answer reaching before them says from which day it counts', async () => {
    const whole = createPostgresTopicPreview({ pool: s.pool, clock });
    const bounded = createPostgresTopicPreview({ pool: s.pool, clock, budgetMb: twoDaysMb });
    try {
      const all = await whole.preview('reinforcement learning');
      expect(all).toMatchObject({ ok: true, total: 4 * (PER_DAY / 2) });
      expect(all).not.toHaveProperty('from');
      const recent = await bounded.preview('reinforcement learning');
      expect(recent).toMatchObject({ ok: true, total: 2 * (PER_DAY / 2), from: '2025-11-23', perDay: PER_DAY / 2 });
      // Days asked that the mirror holds (the newest and the day before): the whole mirror's papers and
      // count; papers a day over the two days held, said so.
      const [held, wholeDay] = [await bounded.preview('reinforcement learning', { days: 1 }), await whole.preview('reinforcement learning', { days: 1 })];
      if (!held.ok || !wholeDay.ok) throw new Error('both answer');
      expect({ total: held.total, papers: held.papers }).toEqual({ total: wholeDay.total, papers: wholeDay.papers });
      expect(held).toMatchObject({ total: 2 * (PER_DAY / 2), from: '2025-11-23', perDay: PER_DAY / 2 });

      // A new day: the window moves on (the 23rd's papers leave), and the answers follow.
      await ingestBatchPg(s.pool, day('2025-11-25'), clock);
      expect(await bounded.preview('reinforcement learning')).toMatchObject({ ok: true, total: 2 * (PER_DAY / 2), from: '2025-11-24' });
      expect(await whole.preview('reinforcement learning')).toMatchObject({ ok: true, total: 5 * (PER_DAY / 2) });
    } finally {
      whole.close();
      bounded.close();
    }
  });
});
