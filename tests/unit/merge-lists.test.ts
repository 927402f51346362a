// A reference row's query lists merged into the display order (src/ledger/lists.ts mergeLists), apart from
// any database: the order a reader's email shows, through the reused dense index and through its Map
// (rows whose watermark and bound are more than 2^20 paper ids apart).
import { describe, expect, it } from 'vitest';
import { mergeLists, type QueryList } from '../../src/ledger/lists.ts';
import { eachItem } from '../../src/ledger/items.ts';
import { packItems } from '../../src/ledger/pack.ts';

const list = (rows: Array<[id: number, upvotes: number, score: number]>): QueryList => ({
  ids: Int32Array.from(rows.map((r) => r[0])),
  upvotes: Int32Array.from(rows.map((r) => r[1])),
  scores: Float64Array.from(rows.map((r) => r[2])),
});

describe('merging a row\'s query lists', () => {
  const a = list([[105, 3, -2], [101, 9, -1], [103, 0, -5], [99, 50, -9]]);
  const b = list([[103, 0, -7], [104, 3, -3], [120, 1, -1]]);

  it('orders papers by topics matched, upvotes, best score, then id; within the row\'s (watermark, bound]', () => {
    const merged = mergeLists([{ bit: 0, list: a }, { bit: 1, list: b }], 100, 110);
    // 103 matched both topics; 101 has the most upvotes; 104 beats 105 on score (-3 < -2); 99 and 120 are out of bounds.
    expect(merged.ids).toEqual([103, 101, 104, 105]);
    expect(merged.masks).toEqual([0b11, 0b01, 0b10, 0b01]);
  });

  it('gives the same order when the bounds are too far apart for the dense index, and merge after merge', () => {
    const lists = [{ bit: 0, list: a }, { bit: 1, list: b }];
    const dense = mergeLists(lists, 100, 130);
    const wide = mergeLists(lists, 100, 100 + 2 ** 21);
    expect(wide).toEqual(dense);
    // A merge of other lists in between leaves nothing behind for the next one.
    mergeLists([{ bit: 2, list: list([[104, 7, -1], [106, 1, -1]]) }], 100, 130);
    expect(mergeLists(lists, 100, 130)).toEqual(dense);
    expect(dense.ids).toEqual([103, 101, 104, 105, 120]);
  });

  it('packs the merged list so that it reads back as merged', () => {
    const merged = mergeLists([{ bit: 0, list: a }, { bit: 1, list: b }], 90, 130);
    const ids: number[] = [];
    const masks: number[] = [];
    eachItem(packItems(merged.ids, merged.masks, 90), 90, 2, (id, mask) => (ids.push(id), masks.push(mask)));
    expect(ids).toEqual(merged.ids);
    expect(masks).toEqual(merged.masks);
  });

  it('orders a diverse reader\'s hundreds of papers as the rule says, ties on topics, upvotes and score included', () => {
    // Three lists of ~150 papers each out of 400 ids, few distinct upvotes and scores: many papers tie on
    // all three and are ordered by id (the sort works in runs of 8 merged pairwise: this spans many runs).
    let seed = 41;
    const next = (k: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % k);
    const rows = Array.from({ length: 3 }, () => {
      const ids = new Set<number>();
      while (ids.size < 150) ids.add(1001 + next(400));
      return [...ids].map((id): [number, number, number] => [id, next(4), -next(3)]);
    });
    const lists = rows.map((r, bit) => ({ bit, list: list(r) }));
    const merged = mergeLists(lists, 1000, 1400);

    const byId = new Map<number, { mask: number; hits: number; ups: number; best: number }>();
    rows.forEach((r, bit) => {
      for (const [id, ups, score] of r) {
        const p = byId.get(id) ?? { mask: 0, hits: 0, ups, best: score };
        p.mask |= 1 << bit;
        p.hits++;
        p.best = Math.min(p.best, score);
        byId.set(id, p);
      }
    });
    const expected = [...byId.keys()].sort((x, y) => {
      const a = byId.get(x)!;
      const b = byId.get(y)!;
      return b.hits - a.hits || b.ups - a.ups || a.best - b.best || x - y;
    });
    expect(merged.ids).toEqual(expected);
    expect(merged.masks).toEqual(expected.map((id) => byId.get(id)!.mask));
  });
});
