import { describe, expect, it } from '@jest/globals';
import { contentTokens, groupNearDuplicates, mostSimilar, NEAR_DUPLICATE_SIMILARITY, textSimilarity } from './similarity.js';

describe('textSimilarity', () => {
  it('ignores case, punctuation, accents and filler words', () => {
    expect(textSimilarity('User prefers concise bullet-point responses', 'The user prefers concise, bullet point responses.')).toBe(1);
    expect(contentTokens('Café, the CRÈME!')).toEqual(['cafe', 'creme']);
  });

  it('scores rephrasings of one fact above the near-duplicate threshold', () => {
    expect(textSimilarity('The project uses SQLite for storage', 'Project uses SQLite for its storage')).toBeGreaterThanOrEqual(
      NEAR_DUPLICATE_SIMILARITY,
    );
  });

  it('keeps facts that differ in the detail that matters apart', () => {
    expect(textSimilarity('uses Node 18', 'uses Node 20')).toBeLessThan(NEAR_DUPLICATE_SIMILARITY);
    expect(textSimilarity('User prefers dark mode', 'User prefers light mode')).toBeLessThan(NEAR_DUPLICATE_SIMILARITY);
  });

  it('is symmetric and 1 for identical text', () => {
    expect(textSimilarity('a b c', 'c d')).toBe(textSimilarity('c d', 'a b c'));
    expect(textSimilarity('same words here', 'same words here')).toBe(1);
  });
});

describe('groupNearDuplicates', () => {
  const text = (item: { text: string }) => item.text;

  it('groups rephrasings and leaves distinct facts out', () => {
    const items = [
      { id: 'a', text: 'User prefers concise responses' },
      { id: 'b', text: 'Uses zsh on macOS' },
      { id: 'c', text: 'The user prefers concise responses.' },
      { id: 'd', text: 'uses Node 20' },
    ];
    expect(groupNearDuplicates(items, { text }).map((group) => group.map((item) => item.id))).toEqual([['a', 'c']]);
  });

  it('never groups items with different keys', () => {
    const items = [
      { id: 'a', type: 'USER', text: 'prefers tabs' },
      { id: 'b', type: 'MEMORY', text: 'prefers tabs' },
    ];
    expect(groupNearDuplicates(items, { text, key: (item) => item.type })).toEqual([]);
  });

  it('does not chain drifting texts into one group', () => {
    const items = [
      { id: 'a', text: 'alpha beta gamma delta' },
      { id: 'b', text: 'alpha beta gamma delta epsilon' },
      { id: 'c', text: 'beta gamma delta epsilon zeta' },
    ];
    const groups = groupNearDuplicates(items, { text, threshold: 0.6 });
    for (const group of groups) expect(group.map((item) => item.id)).not.toEqual(['a', 'b', 'c']);
  });
});

describe('mostSimilar', () => {
  it('finds the closest candidate above the threshold, or null', () => {
    const candidates = ['User prefers dark mode', 'The project uses SQLite for storage'];
    expect(mostSimilar('project uses sqlite for storage', candidates, (c) => c)?.item).toBe(candidates[1]);
    expect(mostSimilar('something unrelated entirely', candidates, (c) => c)).toBeNull();
  });
});

describe('near-duplicates need coverage, not only likeness', () => {
  const text = (item: string) => item;

  it('does not group facts that differ in one number', () => {
    const items = ['Tests of the gateway fail when fixture 4 is missing', 'Tests of the gateway fail when fixture 74 is missing'];
    expect(textSimilarity(items[0] ?? '', items[1] ?? '')).toBeGreaterThanOrEqual(NEAR_DUPLICATE_SIMILARITY);
    expect(groupNearDuplicates(items, { text })).toEqual([]);
  });

  it('groups a fact with a fuller wording of it', () => {
    const items = ['Feature flag 6 gates the new gateway flow', 'Note: feature flag 6 gates the new gateway flow'];
    expect(groupNearDuplicates(items, { text })).toEqual([items]);
  });

  it('finds no covering entry for a text that adds a detail', () => {
    expect(mostSimilar('The gateway listens on port 8080 with TLS', ['The gateway listens on port 8080'], text)).toBeNull();
    expect(mostSimilar('The gateway listens on port 8080', ['The gateway listens on port 8080 with TLS'], text, 0.6)).not.toBeNull();
  });
});
