// A realistic digest for the benchmarks that render or send one message (bench/message-bytes.ts,
// bench/smtp-send.ts): the bundled sample's real abstracts, and links as the loader makes them (signed-token
// lengths: one token per digest in the links to its papers, one per topic in the mute links).
import { readFileSync } from 'node:fs';
import type { DigestPaperView, DigestView } from '../src/render/render.ts';

const fixture = JSON.parse(readFileSync(new URL('../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ title: string; abstract: string; authors: string[]; categories?: string[] }>;
};
const BASE = 'https://digest.example.org';
/** A signed token as src/tokens.ts makes them: `<id>.<purpose>.<expiry>.<43 base64url characters>`. */
const token = (purpose: string) => `48213.${purpose}.0.${'Qk3xZr8vY2mNwq4TfL0aHs7pJ9dKc1EuG6bVyXo5iRt'}`;
const topics = ['reinforcement learning', 'language models', 'video generation'];
const DIGEST_TOKEN = token('view-991');

/** The first `n` papers of a digest, each matched by one or two of three topics. */
export function samplePapers(n: number): DigestPaperView[] {
  return Array.from({ length: n }, (_, i) => {
    const f = fixture.papers[i % fixture.papers.length]!;
    const id = 2511_10000 + i;
    const matched = [topics[i % 3]!, ...(i % 4 === 0 ? [topics[(i + 1) % 3]!] : [])];
    return {
      title: f.title,
      url: `https://arxiv.org/abs/2511.${10000 + i}`,
      authors: f.authors,
      abstract: f.abstract,
      upvotes: (i * 7) % 40,
      categories: f.categories ?? ['cs.LG', 'cs.CL'],
      publishedAt: '2025-11-24',
      codeUrl: i % 3 === 0 ? `https://github.com/example/repo-${i}` : null,
      matchedTopics: matched.map((t) => ({ text: t, muteUrl: `${BASE}/mute/${token(`mute-${topics.indexOf(t) + 11}`)}` })),
      feedback: {
        more: `${BASE}/feedback/${DIGEST_TOKEN}/${id}/more`,
        less: `${BASE}/feedback/${DIGEST_TOKEN}/${id}/less`,
        follow: f.authors[0] ? { url: `${BASE}/follow/${DIGEST_TOKEN}/0/${id}`, name: f.authors[0] } : undefined,
        canonical: true,
      },
      runTopics: topics,
    };
  });
}

/** A digest of `n` papers for one reader. */
export function sampleDigest(n: number): DigestView {
  return {
    email: 'reader.name@university.example.edu',
    edition: '2025-11-25',
    papers: samplePapers(n),
    paperDays: { first: '2025-11-24', last: '2025-11-24' },
    links: {
      preferences: `${BASE}/preferences/${token('manage')}`,
      unsubscribe: `${BASE}/unsubscribe/${token('manage')}`,
      webView: `${BASE}/digests/${DIGEST_TOKEN}`,
      home: `${BASE}/`,
    },
  };
}
