// Digest views for the renderer's tests: papers from the project's sample batch (the 71 papers of a real
// Daily Papers listing), and what a reader sees of an email.
import { readFileSync } from 'node:fs';
import { convert } from 'html-to-text';
import type { DigestPaperView, DigestView } from '../../src/render/render.ts';

interface FixturePaper {
  title: string;
  abstract: string;
  authors: string[];
  upvotes?: number;
}
export const fixture = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: FixturePaper[];
};

export const LINKS = {
  preferences: 'https://digest.example.org/preferences/tok-pref',
  unsubscribe: 'https://digest.example.org/unsubscribe/tok-unsub',
  webView: 'https://digest.example.org/digests/tok-view',
  home: 'https://digest.example.org/',
};

/** Papers from the fixture, in fixture order, each matched by the given topics. */
export function papers(count: number, topics: string[] = ['reinforcement learning'], abstractChars?: number): DigestPaperView[] {
  return Array.from({ length: count }, (_, i) => {
    const f = fixture.papers[i % fixture.papers.length] as FixturePaper;
    let abstract = f.abstract;
    if (abstractChars !== undefined) {
      while (abstract.length < abstractChars) abstract += ` ${f.abstract}`;
      abstract = abstract.slice(0, abstractChars);
    }
    return {
      title: f.title,
      url: `https://arxiv.org/abs/2511.${String(10000 + i)}`,
      authors: f.authors.length > 0 ? f.authors : [`Author ${i}`],
      abstract,
      upvotes: f.upvotes ?? 0,
      categories: ['cs.LG', 'cs.AI'],
      publishedAt: '2025-11-24',
      matchedTopics: topics.map((text, t) => ({ text, muteUrl: `https://digest.example.org/mute/tok-${t}` })),
    };
  });
}

export function digestView(list: DigestPaperView[]): DigestView {
  return { email: 'ada@example.org', edition: '2025-11-25', papers: list, links: LINKS };
}

/** What a reader sees in the HTML part, as text. */
export function visible(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
    ],
  });
}

export const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
export const tidy = (s: string): string => s.replace(/\s+/g, ' ').trim();
export const numberedPapers = (text: string): number => (text.match(/^\d+\. /gm) ?? []).length;
