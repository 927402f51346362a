import { describe, expect, it } from 'vitest';
import { createHighlighter, type Segment } from '../../src/match/highlight.ts';
import { makeTerms, markedHtml } from '../../src/render/card-highlight.ts';

/** The highlighted pieces of `text`, after checking the segments put together give the text back. */
function hits(topics: string[], text: string): string[] {
  const segments: Segment[] = createHighlighter(topics)(text);
  expect(segments.map((s) => s.text).join('')).toBe(text);
  return segments.filter((s) => s.hit).map((s) => s.text);
}

describe('createHighlighter', () => {
  it('marks matching words whatever their case', () => {
    expect(hits(['reinforcement learning'], 'A Minimaximalist Approach to Reinforcement Learning from Human Feedback')).toEqual([
      'Reinforcement',
      'Learning',
    ]);
  });

  it('alternates plain and hit segments in order', () => {
    expect(createHighlighter(['games'])('Zero-Sum Games Incentivize Reasoning')).toEqual([
      { text: 'Zero-Sum ', hit: false },
      { text: 'Games', hit: true },
      { text: ' Incentivize Reasoning', hit: false },
    ]);
  });

  it('is stem-aware: learning ~ learned ~ learns', () => {
    expect(hits(['learning'], 'Agents learned quickly; the model learns; Learning to Navigate')).toEqual([
      'learned',
      'learns',
      'Learning',
    ]);
  });

  it('does not mark a longer word with a different stem', () => {
    expect(hits(['play'], 'Self-play makes better players who play')).toEqual(['play', 'play']);
  });

  it('is accent-insensitive both ways, in composed and decomposed form', () => {
    expect(hits(['pokemon'], 'Competitive Pokémon and Poke\u0301mon')).toEqual(['Pokémon', 'Poke\u0301mon']);
    expect(hits(['Pokémon'], 'Competitive Pokemon teams')).toEqual(['Pokemon']);
  });

  it('marks every word a prefix term starts, stemmed as FTS5 does', () => {
    expect(hits(['diffus*'], 'Diffusion models and diffusers differ')).toEqual(['Diffusion', 'diffusers']);
    expect(hits(['diffusion*'], 'Diffusers for diffusion')).toEqual(['Diffusers', 'diffusion']);
  });

  it('marks a whole phrase only where its words are consecutive', () => {
    expect(hits(['"mixture of experts"'], 'A Mixture of Experts layer; experts in a mixture of sizes')).toEqual([
      'Mixture of Experts',
    ]);
  });

  it('marks a hyphenated term across the hyphen or a space', () => {
    expect(hits(['multi-agent'], 'Multi-Agent Inverse Q-Learning and multi agent games, multiple agents')).toEqual([
      'Multi-Agent',
      'multi agent',
    ]);
  });

  it('marks a prefix phrase', () => {
    expect(hits(['"large language mod"*'], 'Large Language Models and large language modelling')).toEqual([
      'Large Language Models',
      'large language modelling',
    ]);
  });

  it('merges overlapping hits from several topics', () => {
    expect(hits(['"deep reinforcement"', 'reinforcement learning'], 'Streaming Deep Reinforcement Learning Finally Works')).toEqual([
      'Deep Reinforcement',
      'Learning',
    ]);
    expect(hits(['"deep reinforcement"', '"reinforcement learning"'], 'Deep Reinforcement Learning')).toEqual([
      'Deep Reinforcement Learning',
    ]);
  });

  it('marks the alternatives of OR and the terms of groups and fields', () => {
    expect(hits(['(diffusion OR flow) title:video'], 'Flow matching for video, not diffusion')).toEqual([
      'Flow',
      'video',
      'diffusion',
    ]);
  });

  it('does not mark excluded, author or category terms', () => {
    expect(hits(['agents -survey', 'author:Smith', 'category:cs.LG'], 'A survey of agents by Smith on cs.LG')).toEqual([
      'agents',
    ]);
  });

  it('ignores invalid topics instead of throwing', () => {
    expect(hits(['self "play', '()', '-only', 'games'], 'Self-play games')).toEqual(['games']);
  });

  it('returns the text as one plain segment when nothing matches or there are no topics', () => {
    expect(createHighlighter([])('Learning to Navigate the Web')).toEqual([{ text: 'Learning to Navigate the Web', hit: false }]);
    expect(createHighlighter(['chess'])('Learning to Navigate the Web')).toEqual([
      { text: 'Learning to Navigate the Web', hit: false },
    ]);
    expect(createHighlighter(['chess'])('')).toEqual([]);
  });

  it('gives the same answer on repeated calls (no state leaks between texts)', () => {
    const highlight = createHighlighter(['reinforcement learning', 'agent*']);
    const text = 'Multi-Agent Reinforcement Learning for agents';
    const first = highlight(text);
    highlight('something else entirely with learning');
    expect(highlight(text)).toEqual(first);
    expect(first.filter((s) => s.hit).map((s) => s.text)).toEqual(['Agent', 'Reinforcement', 'Learning', 'agents']);
  });
});

describe('what is never marked', () => {
  it('an operator typed in lower case or a function word alone; inside a phrase the phrase is marked', () => {
    expect(hits(['backtracking or search'], 'To Backtrack or Not to Backtrack: Search for Reasoning')).toEqual(['Backtrack', 'Backtrack', 'Search']);
    expect(hits(['the transformer'], 'The Transformer of the Future')).toEqual(['Transformer']);
    expect(hits(['"mixture of experts" OR MoE'], 'A Mixture of Experts is not a MoE of the past')).toEqual(['Mixture of Experts', 'MoE']);
    expect(hits(['"test-time compute" OR "test-time scaling"'], 'Test-time scaling or not: compute at test time')).toEqual(['Test-time scaling']);
  });
});

describe("a card's highlight slots (markedHtml: the text's words read once for every topic)", () => {
  /**
   * Per character of the text, whether a reader with topic `topic` sees it lit (in a slot naming the topic).
   * Blanks are left out: a stretch of blanks alone is never a slot.
   */
  function litMask(marked: string, slots: number[][], topic: number): string {
    let out = '';
    let lit = false;
    for (const piece of marked.split(/(\u0000[oc]\d+\u0000)/)) {
      const mark = /^\u0000([oc])(\d+)\u0000$/.exec(piece);
      if (mark) lit = mark[1] === 'o' && slots[Number(mark[2])]!.includes(topic);
      else for (const ch of piece) out += ch.trim() === '' ? ' ' : lit ? '^' : '.';
    }
    return out;
  }
  /** The same mask from createHighlighter([topic]). */
  function expectedMask(topic: string, text: string): string {
    let out = '';
    for (const s of createHighlighter([topic])(text)) for (const ch of s.text) out += ch.trim() === '' ? ' ' : s.hit ? '^' : '.';
    return out;
  }

  it('lights for each topic exactly what createHighlighter([topic]) marks, topics overlapping', () => {
    const topics = ['reinforcement learning', 'learning', '"deep learning"', 'agent*', 'pokemon', 'chess', '"mixture of experts" OR MoE', 'the transformer'];
    const text = 'Deep Learning agents: Multi-Agent Reinforcement Learning with a Mixture of Experts, a MoE Transformer and Pokémon';
    const slots: number[][] = [];
    const marked = markedHtml(text, topics.map(makeTerms), slots);
    expect(marked.replace(/\u0000[oc]\d+\u0000/g, '')).toBe(text);
    for (let k = 0; k < topics.length; k++) expect(litMask(marked, slots, k)).toBe(expectedMask(topics[k]!, text));
    expect(slots.some((s) => s.length > 1)).toBe(true);
  });

  it('marks nothing for a topic whose terms cannot be made, and keeps the others', () => {
    const slots: number[][] = [];
    const marked = markedHtml('Self-play games', [makeTerms('self "play'), makeTerms('games'), null], slots);
    expect(marked.replace(/\u0000[oc]\d+\u0000/g, '')).toBe('Self-play games');
    expect(slots).toEqual([[1]]);
  });
});
