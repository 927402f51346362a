// The benchmark's subscriber list, written as a CSV for `digest import` (streamed: a million rows never
// sit in memory). About half the subscribers draw their topics from the active pool (their digest holds
// some of today's papers), the others from the quiet pool (nothing today). Draws are Zipf-distributed,
// so popular topics are shared by many subscribers, as on a real list.
import { closeSync, openSync, writeSync } from 'node:fs';
import { zipf, type BenchTopic, type Corpus } from './corpus.ts';

export interface PopulationOptions {
  subscribers: number;
  topicsPerSubscriber: number;
  /** Share of subscribers whose topics match some of today's papers. */
  activeShare: number;
  /** Zipf exponent of the topic draw. */
  skew: number;
}

export interface PopulationStats {
  rows: number;
  bytes: number;
  /** Distinct topic texts used. */
  distinctTopics: number;
  /** Subscribers on the most popular topic. */
  topTopicShare: number;
}

const ROWS_PER_WRITE = 5_000;

export function writeSubscribersCsv(file: string, corpus: Corpus, opts: PopulationOptions, random: () => number): PopulationStats {
  const active = zipf(corpus.activeTopics.length, opts.skew, random);
  const quiet = zipf(corpus.quietTopics.length, opts.skew, random);
  const used = new Map<string, number>();
  const fd = openSync(file, 'w');
  let bytes = 0;
  const write = (s: string) => {
    bytes += writeSync(fd, s);
  };
  try {
    write('email,topics,confirmed\n');
    let chunk = '';
    for (let i = 0; i < opts.subscribers; i++) {
      const isActive = random() < opts.activeShare;
      const pool = isActive ? corpus.activeTopics : corpus.quietTopics;
      const draw = isActive ? active : quiet;
      const wanted = Math.min(opts.topicsPerSubscriber, pool.length);
      const chosen = new Set<BenchTopic>();
      for (let tries = 0; chosen.size < wanted && tries < wanted * 20; tries++) chosen.add(pool[draw()]!);
      const texts = [...chosen].map((t) => t.text);
      for (const t of texts) used.set(t, (used.get(t) ?? 0) + 1);
      chunk += `reader${i}@lab${i % 97}.bench.example,"${texts.join('; ').replaceAll('"', '""')}",true\n`;
      if ((i + 1) % ROWS_PER_WRITE === 0) {
        write(chunk);
        chunk = '';
      }
    }
    write(chunk);
  } finally {
    closeSync(fd);
  }
  const top = Math.max(0, ...used.values());
  return { rows: opts.subscribers, bytes, distinctTopics: used.size, topTopicShare: opts.subscribers ? top / opts.subscribers : 0 };
}
