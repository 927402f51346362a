// Paper fields for feedback and reader models, ingest side: LaTeX in Hugging Face abstracts is tidied as for arXiv (a real Daily Papers
// abstract arrives as `Pok\'emon`), and HF's githubRepo becomes the paper's code link.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readHfDaily } from '../../src/ingest/readers/hf.ts';
import { tidyAbstract } from '../../src/ingest/normalize.ts';

const page = JSON.parse(readFileSync('/work/shared/fixtures/daily-papers-page.json', 'utf8')) as {
  papers: Array<{ title: string; abstract: string }>;
};
const pokemon = page.papers.find((p) => p.abstract.includes("Pok\\'emon"))!;

describe('LaTeX in Hugging Face abstracts', () => {
  it("reaches the paper as Pokémon, not Pok\\'emon, and keeps the math as written", () => {
    const batch = readHfDaily(
      [{ paper: { id: '2506.10326', title: pokemon.title, summary: pokemon.abstract, upvotes: 3 }, publishedAt: '2025-11-24T01:00:00Z' }],
      { date: '2025-11-24' },
    );
    const abstract = batch.papers[0]!.abstract;
    expect(abstract).toContain('Pokémon Video Game Championships');
    expect(abstract).not.toContain("\\'");
    expect(abstract).toContain('10^{139}'); // math carries meaning: untouched
  });

  it.each([
    ["Pok\\'{e}mon", 'Pokémon'],
    ["{\\'e}cole", 'école'],
    ['Schr\\"odinger', 'Schrödinger'],
    ['we \\emph{learn} fast', 'we learn fast'],
    ['plain text', 'plain text'],
  ])('%s -> %s', (raw, want) => {
    expect(tidyAbstract(raw)).toBe(want);
  });
});

describe('code links from Hugging Face', () => {
  it('keeps an http(s) githubRepo as the code link and drops anything else', () => {
    const batch = readHfDaily(
      [
        { paper: { id: '2511.00001', title: 'A', summary: 'x', githubRepo: 'https://github.com/org/repo' } },
        { paper: { id: '2511.00002', title: 'B', summary: 'y', githubRepo: 'javascript:alert(1)' } },
        { paper: { id: '2511.00003', title: 'C', summary: 'z' } },
      ],
      { date: '2025-11-24' },
    );
    expect(batch.papers.map((p) => p.codeUrl)).toEqual(['https://github.com/org/repo', undefined, undefined]);
  });
});
