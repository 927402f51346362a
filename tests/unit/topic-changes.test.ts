import { describe, expect, it } from 'vitest';
import { topicChanges } from '../../src/subscribers/records/topic-changes.ts';
import type { Topic } from '../../src/types.ts';

const topic = (id: number, queryId: number, text: string, muted = false): Topic =>
  ({ id, subscriberId: 1, queryId, text, muted, position: id });

describe('topicChanges: what saving a new topic list writes (both engines)', () => {
  it('keeps the topic id of a query that stays, so mute links in sent digests still work', () => {
    const changes = topicChanges([topic(7, 70, 'MoE'), topic(8, 80, 'agents')], [{ queryId: 80, text: 'Agents' }, { queryId: 90, text: 'RLHF' }]);
    expect(changes).toEqual([
      { kind: 'update', id: 8, text: 'Agents', position: 0, muted: false },
      { kind: 'insert', queryId: 90, text: 'RLHF', position: 1, muted: false },
      { kind: 'delete', id: 7 },
    ]);
  });

  it('keeps a muted topic muted unless the new list says otherwise; the first of two equal queries wins', () => {
    const changes = topicChanges([topic(7, 70, 'MoE', true)], [{ queryId: 70, text: 'MoE' }, { queryId: 70, text: 'moe' }, { queryId: 71, text: 'x', muted: true }]);
    expect(changes).toEqual([
      { kind: 'update', id: 7, text: 'MoE', position: 0, muted: true },
      { kind: 'insert', queryId: 71, text: 'x', position: 1, muted: true },
    ]);
    expect(topicChanges([topic(7, 70, 'MoE', true)], [{ queryId: 70, text: 'MoE', muted: false }])[0]).toMatchObject({ muted: false });
  });
});
