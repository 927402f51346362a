// Feedback and suggestions, renderer side: the "Code" link, feedback links, the reader's own cap and the labelled
// "you may also like" section, in both parts of the email and on the web page.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type DigestPaperView, type DigestView, type Renderer } from '../../src/render/render.ts';

const fixture = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ title: string; abstract: string; authors: string[] }>;
};
const LINKS = {
  preferences: 'https://d.example.org/preferences/p',
  unsubscribe: 'https://d.example.org/unsubscribe/u',
  webView: 'https://d.example.org/digests/w',
  home: 'https://d.example.org/',
};

function paper(i: number, extra: Partial<DigestPaperView> = {}): DigestPaperView {
  const f = fixture.papers[i]!;
  return {
    title: f.title,
    abstract: f.abstract,
    authors: f.authors.length > 0 ? f.authors : ['Ada Author'],
    url: `https://huggingface.co/papers/2511.${String(10000 + i)}`,
    upvotes: 1,
    categories: [],
    publishedAt: '2025-11-24',
    matchedTopics: [{ text: 'learning', muteUrl: 'https://d.example.org/mute/m' }],
    feedback: {
      more: `https://d.example.org/feedback/t${i}/${i}/more`,
      less: `https://d.example.org/feedback/t${i}/${i}/less`,
      follow: { url: `https://d.example.org/follow/t${i}/0/${i}`, name: 'Ada Author' },
    },
    ...extra,
  };
}

let renderer: Renderer;
beforeAll(async () => {
  renderer = await createRenderer();
});

describe('learning digests in the email', () => {
  it('shows a Code link only for papers with an http(s) code repository', () => {
    const view: DigestView = {
      email: 'r@example.org',
      edition: '2025-11-25',
      papers: [paper(0, { codeUrl: 'https://github.com/org/repo' }), paper(1, { codeUrl: 'javascript:alert(1)' }), paper(2)],
      links: LINKS,
    };
    const mail = renderer.digest(view);
    expect(mail.html.match(/>Code<\/a>/g)).toHaveLength(1);
    expect(mail.html).toContain('href="https://github.com/org/repo"');
    expect(mail.html).not.toContain('javascript:');
    expect(mail.text).toContain('Code: https://github.com/org/repo');
    expect(renderer.webView(view)).toContain('href="https://github.com/org/repo"');
  });

  it('carries more/less/follow links per paper in both parts', () => {
    const mail = renderer.digest({ email: 'r@example.org', edition: '2025-11-25', papers: [paper(0), paper(1)], links: LINKS });
    expect(mail.html).toContain('href="https://d.example.org/feedback/t1/1/less"');
    expect(mail.text).toContain('More like this: https://d.example.org/feedback/t0/0/more');
    expect(mail.text).toContain('Follow Ada Author: https://d.example.org/follow/t0/0/0');
  });

  it("lists at most the reader's cap, the rest behind the web link", () => {
    const view: DigestView = {
      email: 'r@example.org',
      edition: '2025-11-25',
      papers: [0, 1, 2, 3, 4, 5].map((i) => paper(i)),
      links: LINKS,
      maxPapers: 4,
    };
    const mail = renderer.digest(view);
    expect(mail.shownPapers).toBe(4);
    expect(mail.text).toContain('2 more papers in this digest');
    expect(mail.html).toContain(fixture.papers[3]!.title.slice(0, 30));
    expect(mail.html).not.toContain(fixture.papers[4]!.title.slice(0, 30));
    expect(renderer.digest({ ...view, maxPapers: null }).shownPapers).toBe(6);
  });

  it('labels "you may also like" papers apart from the matched ones', () => {
    const view: DigestView = {
      email: 'r@example.org',
      edition: '2025-11-25',
      papers: [paper(0)],
      links: LINKS,
      suggestions: [paper(10, { matchedTopics: [] }), paper(11, { matchedTopics: [] })],
    };
    const mail = renderer.digest(view);
    const at = mail.text.indexOf('You may also like');
    expect(at).toBeGreaterThan(mail.text.indexOf(fixture.papers[0]!.title.slice(0, 20)));
    expect(mail.text.slice(at)).toContain(fixture.papers[11]!.title.slice(0, 20));
    expect(mail.html).toContain('You may also like');
    expect(renderer.webView(view)).toContain('You may also like');
    expect(renderer.digest({ ...view, suggestions: [] }).html).not.toContain('You may also like');
  });

  it('lists a followed author\'s papers apart, above the numbered list, in both parts and on the web page', () => {
    const byFollow = (i: number) => paper(i, { matchedTopics: [{ text: 'author:"Ada Author"', muteUrl: 'https://d.example.org/mute/a' }] });
    const view: DigestView = { email: 'r@example.org', edition: '2025-11-25', papers: [paper(0), paper(1)], links: LINKS, followed: [byFollow(12)] };
    const mail = renderer.digest(view);
    const title = fixture.papers[12]!.title.slice(0, 20);
    const block = mail.text.indexOf('From authors you follow');
    expect(block).toBeGreaterThan(0);
    expect(mail.text.indexOf(title)).toBeGreaterThan(block);
    expect(mail.text.indexOf(title)).toBeLessThan(mail.text.indexOf(`1. ${fixture.papers[0]!.title.slice(0, 20)}`));
    expect(mail.text).toContain('By Ada Author, whom you follow');
    // The numbered list is the topics' papers alone; the intro counts both.
    expect(mail.text).not.toMatch(/\n3\. /);
    expect(mail.text).toContain('2 new papers matched your topics, and 1 from an author you follow');
    expect(mail.html).toContain('From authors you follow');
    expect(mail.html).toContain('href="https://d.example.org/feedback/t12/12/more"');
    expect(renderer.webView(view)).toContain('From authors you follow');
    expect(renderer.digest({ ...view, followed: [] }).text).not.toContain('From authors you follow');
  });
});
