// The naive baseline, on a sample of subscribers: what a first version would do per subscriber —
// loop over every paper and every topic in JS, then fill the MJML template and run mjml2html for
// that one email. Papers are loaded and tokenised once (generous to the baseline); sending is not
// counted at all (generous again). The per-subscriber cost is extrapolated to the whole list.
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import type { Db } from '../src/db/open.ts';
import { DEFAULT_TEMPLATES_DIR } from '../src/render/render-templates.ts';
import { PaperIndex, topicFromText, type BenchTopic } from './corpus.ts';

export interface NaiveResult {
  sampled: number;
  /** Sampled subscribers who would get a digest. */
  digests: number;
  matchMsPerSubscriber: number;
  mjmlMsPerDigest: number;
  /** Digests per second this approach would reach (matching every subscriber, mjml2html per digest). */
  digestsPerSecond: number;
  /** Matching the whole list this way, extrapolated from the sample. */
  matchSecondsForAll: number;
}

interface PaperRow {
  id: number;
  title: string;
  abstract: string;
  authors: string;
  url: string;
  upvotes: number;
}

// Every paper of the benchmark's batch (the naive loop scans them all for each subscriber).
const SELECT_PAPERS = `SELECT id, title, abstract, authors, url, upvotes FROM papers ORDER BY id`;

// A seeded sample of confirmed subscribers (rowid order, every k-th row) with their topic texts.
const SELECT_SAMPLE = `
  SELECT s.id, s.email, json_group_array(t.text ORDER BY t.position) AS topics
  FROM subscribers s JOIN topics t ON t.subscriber_id = s.id
  WHERE s.status = 'confirmed' AND s.id % @step = @offset
  GROUP BY s.id ORDER BY s.id LIMIT @limit`;

const COUNT_CONFIRMED = `SELECT count(*) AS n FROM subscribers WHERE status = 'confirmed'`;

export async function measureNaive(db: Db, opts: { sample: number; subscribers: number; publicUrl: string }): Promise<NaiveResult> {
  // Loaded here, after the pipeline's stages: MJML holds ~86 MB of RSS, which is the baseline's, not ours.
  const { default: mjml2html } = await import('mjml');
  const papers = db.prepare<[], PaperRow>(SELECT_PAPERS).all();
  const index = new PaperIndex(papers);
  const confirmed = (db.prepare(COUNT_CONFIRMED).get() as { n: number }).n;
  const step = Math.max(1, Math.floor(confirmed / opts.sample));
  const sample = db
    .prepare<{ step: number; offset: number; limit: number }, { id: number; email: string; topics: string }>(SELECT_SAMPLE)
    .all({ step, offset: Math.floor(step / 2), limit: opts.sample });
  const template = Handlebars.create().compile(readFileSync(join(DEFAULT_TEMPLATES_DIR, 'digest.mjml'), 'utf8'));

  let matchMs = 0;
  let mjmlMs = 0;
  let digests = 0;
  for (const s of sample) {
    const t0 = performance.now();
    const topics: BenchTopic[] = (JSON.parse(s.topics) as string[]).map(topicFromText);
    const hits: Array<{ paper: PaperRow; topics: string[] }> = [];
    for (let i = 0; i < papers.length; i++) {
      const matched = topics.filter((t) => index.matches(i, t)).map((t) => t.text);
      if (matched.length > 0) hits.push({ paper: papers[i]!, topics: matched });
    }
    hits.sort((a, b) => b.topics.length - a.topics.length || b.paper.upvotes - a.paper.upvotes);
    const t1 = performance.now();
    matchMs += t1 - t0;
    if (hits.length === 0) continue;
    digests++;
    const base = `${opts.publicUrl}/x/${s.id}`;
    const filled = template({
      subject: `${hits.length} new papers`,
      preview: hits[0]!.paper.title,
      edition: 'today',
      email: s.email,
      intro: `${hits.length} new papers matched your topics.`,
      links: { webView: `${base}/web`, preferences: `${base}/prefs`, unsubscribe: `${base}/unsub`, home: opts.publicUrl },
      papers: hits.map((h) => ({
        p: {
          url: h.paper.url,
          titleHtml: Handlebars.escapeExpression(h.paper.title),
          abstractHtml: Handlebars.escapeExpression(h.paper.abstract),
          authors: (JSON.parse(h.paper.authors) as string[]).join(', '),
          meta: `${h.paper.upvotes} upvotes`,
        },
        matched: h.topics.map((text) => ({ text, muteUrl: `${base}/mute` })),
      })),
      more: 0,
    });
    await mjml2html(filled, { validationLevel: 'soft', fonts: {}, keepComments: false, minify: true, minifyOptions: { minifyCss: false } });
    mjmlMs += performance.now() - t1;
  }
  const n = Math.max(1, sample.length);
  const msPerSubscriberAll = (matchMs + mjmlMs) / n;
  return {
    sampled: sample.length,
    digests,
    matchMsPerSubscriber: matchMs / n,
    mjmlMsPerDigest: digests > 0 ? mjmlMs / digests : 0,
    digestsPerSecond: (digests / n) * (1000 / msPerSubscriberAll),
    matchSecondsForAll: ((matchMs / n) * opts.subscribers) / 1000,
  };
}
