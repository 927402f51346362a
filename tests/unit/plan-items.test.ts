// A ledger row's packed paper list (src/plan/items.ts): the plain layout, and the mapped one a row gets
// when it shares its group's list (src/plan/groups.ts) but numbers its topics differently.
import { describe, expect, it } from 'vitest';
import { decodeItems, encodeItems, mapItems } from '../../src/plan/items.ts';

describe('packed paper lists', () => {
  it('reads back what it packs, in order, with the topics of each paper', () => {
    const blob = encodeItems(
      [
        { paperId: 1005, topicBits: [0, 1] },
        { paperId: 1001, topicBits: [1] },
        { paperId: 1300, topicBits: [0] },
      ],
      1000,
    );
    expect(decodeItems(blob, 1000, '71,72')).toEqual([
      { paperId: 1005, topicIds: [71, 72] },
      { paperId: 1001, topicIds: [72] },
      { paperId: 1300, topicIds: [71] },
    ]);
  });

  it('a mapped list names each paper\'s topics through the row\'s own bits, in the row\'s topic order', () => {
    // The group's bits: 0 = query A, 1 = query B. This reader typed [muted C, B, A]: A is their bit 2, B bit 1.
    const group = encodeItems(
      [
        { paperId: 12, topicBits: [0, 1] },
        { paperId: 15, topicBits: [0] },
        { paperId: 11, topicBits: [1] },
      ],
      10,
    );
    const row = mapItems(group, [2, 1]);
    expect(row[0]).toBe(0);
    expect(decodeItems(row, 10, '900,901,902')).toEqual([
      { paperId: 12, topicIds: [901, 902] },
      { paperId: 15, topicIds: [902] },
      { paperId: 11, topicIds: [901] },
    ]);
    // The same list read by a reader whose bits are the group's: the plain bytes.
    expect(decodeItems(group, 10, '500,501')).toEqual([
      { paperId: 12, topicIds: [500, 501] },
      { paperId: 15, topicIds: [500] },
      { paperId: 11, topicIds: [501] },
    ]);
  });

  it('refuses a mapped list that names bits the row does not have, or has no list', () => {
    const group = encodeItems([{ paperId: 3, topicBits: [0] }], 0);
    expect(() => decodeItems(mapItems(group, [3]), 0, '1,2')).toThrow(/malformed/);
    expect(() => decodeItems(Buffer.from([0, 1, 0]), 0, '1')).toThrow(/malformed/);
    expect(() => decodeItems(Buffer.from([0, 0]), 0, '1')).toThrow(/malformed/);
  });
});
