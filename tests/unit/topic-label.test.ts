import { describe, expect, it } from 'vitest';
import { topicLabel } from '../../src/match/label.ts';

describe('a topic as the reader names it', () => {
  it('drops the query syntax: quotes, OR, field prefixes, excluded terms, filters', () => {
    expect(topicLabel('"test-time compute" OR "test-time scaling"')).toBe('test-time compute or test-time scaling');
    expect(topicLabel('reinforcement learning -survey')).toBe('reinforcement learning');
    expect(topicLabel('author:"Yann LeCun"')).toBe('Yann LeCun');
    expect(topicLabel('diffusion (image OR video) -(survey OR review) upvotes>=10')).toBe('diffusion image or video');
    expect(topicLabel('title:agent* AND planning')).toBe('agent… planning');
    expect(topicLabel('like:2501.00010')).toBe('papers like 2501.00010');
    expect(topicLabel('-survey OR  "mixture of experts"')).toBe('mixture of experts');
  });

  it('keeps a plain topic as typed, and a text it cannot read, tidied', () => {
    expect(topicLabel('Mixture of Experts')).toBe('Mixture of Experts');
    expect(topicLabel('  "unbalanced  quote ')).toBe('"unbalanced quote');
  });
});
