// A ledger row's packed paper list (src/ledger/items.ts): the plain layout, and the mapped one a row gets
// when it shares its group's list (src/plan/groups.ts) but numbers its topics differently.
import { describe, expect, it } from 'vitest';
import { decodeItems, eachItem, encodeItems, mapItems } from '../../src/ledger/items.ts';

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

  it('reads records of any width in place: offsets past 4096, an odd-width offset padded by its mask, many topics', () => {
    // Offsets up to 0x12345 (5 hex digits) and masks up to 0x1ff (3 digits): 8 nibbles a record.
    const items = [
      { paperId: 0x12345 + 7, topicBits: [0, 8] },
      { paperId: 8, topicBits: [3] },
      { paperId: 0x10000 + 7, topicBits: [0, 1, 2, 3, 4, 5, 6, 7, 8] },
    ];
    const blob = encodeItems(items, 7);
    expect(blob[0]).toBe(0x53);
    const seen: Array<[number, number]> = [];
    expect(eachItem(blob, 7, 9, (paperId, mask) => seen.push([paperId, mask]))).toBe(3);
    expect(seen).toEqual([
      [0x12345 + 7, 0x101],
      [8, 0x8],
      [0x10000 + 7, 0x1ff],
    ]);
    // A single-topic list stores no mask: every paper matched topic 0.
    const single = encodeItems([{ paperId: 20, topicBits: [0] }, { paperId: 25, topicBits: [0] }], 10);
    expect(decodeItems(single, 10, '44')).toEqual([
      { paperId: 20, topicIds: [44] },
      { paperId: 25, topicIds: [44] },
    ]);
  });

  it('refuses a plain list whose records do not fill it', () => {
    // Two bytes a record (offsets of three hex digits, masks of one): a byte short is half a record.
    const blob = encodeItems([{ paperId: 0x305, topicBits: [0, 1] }, { paperId: 6, topicBits: [1] }], 0);
    expect(blob[0]).toBe(0x31);
    expect(decodeItems(blob, 0, '1,2')).toEqual([{ paperId: 0x305, topicIds: [1, 2] }, { paperId: 6, topicIds: [2] }]);
    expect(() => decodeItems(blob.subarray(0, blob.length - 1), 0, '1,2')).toThrow(/malformed paper list/);
    expect(() => decodeItems(Buffer.from([0x00 + 0x02, 0x11]), 0, '1')).toThrow(/malformed/);
  });
});
