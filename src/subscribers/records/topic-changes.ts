// What replacing a subscriber's topics writes, decided once for both engines: a kept query keeps its topic
// id (digests and mute links name topic ids), the first of two equal queries wins, positions follow the
// desired order, and a kept topic keeps its mute state unless the desired one says otherwise.
import type { Topic } from '../../types.ts';

export interface DesiredTopic {
  text: string;
  queryId: number;
  /** Undefined keeps the current mute state of a kept topic (new topics start unmuted). */
  muted?: boolean;
}

export type TopicChange =
  | { kind: 'update'; id: number; text: string; position: number; muted: boolean }
  | { kind: 'insert'; queryId: number; text: string; position: number; muted: boolean }
  | { kind: 'delete'; id: number };

export function topicChanges(current: readonly Topic[], desired: readonly DesiredTopic[]): TopicChange[] {
  const byQuery = new Map(current.map((t) => [t.queryId, t]));
  const kept = new Set<number>();
  const changes: TopicChange[] = [];
  for (const d of desired) {
    if (kept.has(d.queryId)) continue;
    const position = kept.size;
    kept.add(d.queryId);
    const existing = byQuery.get(d.queryId);
    if (existing) changes.push({ kind: 'update', id: existing.id, text: d.text, position, muted: d.muted ?? existing.muted });
    else changes.push({ kind: 'insert', queryId: d.queryId, text: d.text, position, muted: d.muted ?? false });
  }
  for (const t of current) if (!kept.has(t.queryId)) changes.push({ kind: 'delete', id: t.id });
  return changes;
}
