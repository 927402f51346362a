// Writes the benchmark's input files: a batch of papers (the project's batch JSON) and a subscriber CSV
// for `digest import`. bench/run.ts runs it in a child process, so the benchmark's memory figures are
// the service's alone; it also works by hand, to try the real commands on a big list:
//   tsx bench/generate.ts --subscribers 100000 --papers 1000 --topics 3 --batch /tmp/b.json --csv /tmp/s.csv
//   digest import /tmp/s.csv && digest ingest /tmp/b.json && digest run
// Prints one JSON line of statistics on stdout.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { utcDate } from '../src/clock.ts';
import { buildCorpus, loadAbstracts, seededRandom, type Corpus } from './corpus.ts';
import { writeSubscribersCsv, type PopulationStats } from './population.ts';

export interface GenerateOptions {
  subscribers: number;
  papers: number;
  topicsPerSubscriber: number;
  /**
   * friendly: half the list gets 5-30 papers; broad: everyone has common phrases (~150+ papers); diverse:
   * three of 3,000 quoted phrases each, mildly skewed (~150-250 papers, nearly one topic set per reader).
   */
  profile?: TopicsProfile;
  seed: number;
  /** YYYY-MM-DD of the batch (default: today, UTC). */
  date?: string;
  batchFile: string;
  csvFile: string;
}

export type TopicsProfile = 'friendly' | 'broad' | 'diverse';
export const TOPICS_PROFILES: readonly TopicsProfile[] = ['friendly', 'broad', 'diverse'];

/** Which topics a profile draws from, the share of readers on them, and the Zipf exponent of the draw. */
function drawOf(profile: TopicsProfile, corpus: Corpus): { corpus: Corpus; activeShare: number; skew: number } {
  // Broad: everyone's topics match (a common phrase always does); a flatter draw, as common phrases are.
  if (profile === 'broad') return { corpus: { ...corpus, activeTopics: corpus.broadTopics }, activeShare: 1, skew: 0.5 };
  // Diverse: 0.7 puts the mean digest at ~180 papers (0.6: ~140, 0.8: ~250; the top phrase is in 70% of papers).
  if (profile === 'diverse') return { corpus: { ...corpus, activeTopics: corpus.diverseTopics }, activeShare: 1, skew: 0.7 };
  return { corpus, activeShare: 0.5, skew: 1.0 };
}

export interface GenerateStats extends PopulationStats {
  papers: number;
  activeTopics: number;
  quietTopics: number;
}

export function generateFiles(o: GenerateOptions): GenerateStats {
  const random = seededRandom(o.seed);
  const date = o.date ?? utcDate(new Date());
  const corpus = buildCorpus(loadAbstracts(), o.papers, date, random);
  writeFileSync(o.batchFile, JSON.stringify({ source: 'bench', date, papers: corpus.papers }));
  const draw = drawOf(o.profile ?? 'friendly', corpus);
  if (draw.corpus.activeTopics.length < o.topicsPerSubscriber) {
    throw new Error(`only ${draw.corpus.activeTopics.length} ${o.profile} topics in this corpus; use more --papers or fewer --topics`);
  }
  const population = writeSubscribersCsv(
    o.csvFile,
    draw.corpus,
    { subscribers: o.subscribers, topicsPerSubscriber: o.topicsPerSubscriber, activeShare: draw.activeShare, skew: draw.skew },
    random,
  );
  return {
    ...population,
    papers: corpus.papers.length,
    activeTopics: draw.corpus.activeTopics.length,
    quietTopics: corpus.quietTopics.length,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      subscribers: { type: 'string', default: '10000' },
      papers: { type: 'string', default: '1000' },
      topics: { type: 'string', default: '3' },
      'topics-profile': { type: 'string', default: 'friendly' },
      seed: { type: 'string', default: '1' },
      date: { type: 'string' },
      batch: { type: 'string', default: 'bench-batch.json' },
      csv: { type: 'string', default: 'bench-subscribers.csv' },
    },
  });
  const stats = generateFiles({
    subscribers: Number(values.subscribers),
    papers: Number(values.papers),
    topicsPerSubscriber: Number(values.topics),
    profile: TOPICS_PROFILES.find((p) => p === values['topics-profile']) ?? 'friendly',
    seed: Number(values.seed),
    date: values.date,
    batchFile: values.batch!,
    csvFile: values.csv!,
  });
  process.stdout.write(`${JSON.stringify(stats)}\n`);
}
