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
});
