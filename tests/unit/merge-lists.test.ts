// A reference row's query lists merged into the display order (src/ledger/lists.ts mergeLists), apart from
// any database: the order a reader's email shows, through the reused dense index and through its Map
// (rows whose watermark and bound are more than 2^20 paper ids apart). And the sending loader's walk, which
// sorts only the papers an email shows (mergeFirst, ListReader.walk).
import { describe, expect, it } from 'vitest';
import { encodeRefs, ListReader, mergeFirst, mergeLists, type QueryList } from '../../src/ledger/lists.ts';
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

/** Three lists of ~150 papers each out of 400 ids from 1001, few distinct upvotes and scores (many ties). */
function diverseRow(seed: number): QueryList[] {
  const next = (k: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % k);
  return Array.from({ length: 3 }, () => {
    const ids = new Set<number>();
    while (ids.size < 150) ids.add(1001 + next(400));
    return list([...ids].map((id): [number, number, number] => [id, next(4), -next(3)]));
  });
}

describe('the loader\'s merge: only the papers an email shows in display order', () => {
  const lists = diverseRow(41).map((l, bit) => ({ bit, list: l }));

  it('puts the first k papers in display order and every other paper after them, with its mask, whatever k', () => {
    for (const [from, to] of [[1000, 1400], [1000, 1000 + 2 ** 21], [1100, 1300]] as const) {
      const all = mergeLists(lists, from, to);
      const n = all.ids.length;
      const maskOf = new Map(all.ids.map((id, i) => [id, all.masks[i]!]));
      // A buffer too short for the row: grown.
      const into = { ids: new Int32Array(4), masks: new Int32Array(4), n: 0, ordered: 0 };
      for (const k of [0, 1, 7, 25, n - 1, n, n + 10]) {
        const got = mergeFirst(lists, from, to, k, into);
        expect([got.n, got.ordered]).toEqual([n, Math.min(k, n)]);
        const ids = [...got.ids.subarray(0, n)];
        expect(ids.slice(0, got.ordered), `k ${k}`).toEqual(all.ids.slice(0, got.ordered));
        expect([...ids].sort((a, b) => a - b)).toEqual([...all.ids].sort((a, b) => a - b));
        expect([...got.masks.subarray(0, n)]).toEqual(ids.map((id) => maskOf.get(id)));
      }
    }
  });

  it('walks a reference row in display order as long as the walker asks, the rest in any order; once, twice and kept', () => {
    const prepare = () => ({ get: () => undefined });
    const reader = new ListReader({ prepare } as unknown as ConstructorParameters<typeof ListReader>[0]);
    lists.forEach(({ list: l }, i) => reader.remember(7 + i, l));
    const row = encodeRefs(lists.map(({ bit }, i) => ({ bit, listId: 7 + i })));
    const all = mergeLists(lists, 1000, 1400);
    // As the loader does: papers it "cannot read" (deleted since planning) are skipped, and it wants the
    // display order until it has made 25.
    const deleted = new Set(all.ids.filter((_, i) => i % 9 === 4));
    for (const shown of [25, 25, 25, 60, 25]) {
      const made: number[] = [];
      const met: number[] = [];
      reader.walk(row, 1000, 1400, 3, shown, (id, mask) => {
        expect(mask).toBe(all.masks[all.ids.indexOf(id)]);
        met.push(id);
        if (made.length < shown && !deleted.has(id)) made.push(id);
        return made.length < shown;
      });
      expect(made).toEqual(all.ids.filter((id) => !deleted.has(id)).slice(0, shown));
      expect(met.slice(0, all.ids.indexOf(made.at(-1)!) + 1)).toEqual(all.ids.slice(0, all.ids.indexOf(made.at(-1)!) + 1));
      expect([...met].sort((a, b) => a - b)).toEqual([...all.ids].sort((a, b) => a - b));
    }
    // A plain list is walked as it is stored.
    const plain = packItems(all.ids, all.masks, 1000);
    const met: number[] = [];
    reader.walk(plain, 1000, 1400, 3, 25, (id) => (met.push(id), false));
    expect(met).toEqual(all.ids);
  });
});
