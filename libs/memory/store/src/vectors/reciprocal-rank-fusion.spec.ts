import { describe, expect, it } from '@jest/globals';
import { reciprocalRankFusion } from './reciprocal-rank-fusion.js';

describe('reciprocalRankFusion', () => {
  it('puts first what both rankings rank well, before what only one ranks first', () => {
    const fused = reciprocalRankFusion([
      ['words-only', 'both'],
      ['meaning-only', 'both'],
    ]).map((hit) => hit.id);
    expect(fused[0]).toBe('both');
    expect(fused).toEqual(['both', 'words-only', 'meaning-only']);
  });

  it('keeps an entry only one ranking found', () => {
    expect(reciprocalRankFusion([[], ['only-by-meaning']]).map((hit) => hit.id)).toEqual(['only-by-meaning']);
  });

  it('gives each id one score, summed over the rankings', () => {
    const [top] = reciprocalRankFusion([['a'], ['a']]);
    expect(top).toEqual({ id: 'a', score: 2 / 61 });
  });
});
