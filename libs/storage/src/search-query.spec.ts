import { describe, expect, it } from '@jest/globals';
import { toFtsMatch } from './search-query.js';

describe('FTS5 query from user text', () => {
  it('quotes each word and ORs them', () => {
    expect(toFtsMatch('Docker networking')).toBe('"docker" OR "networking"');
  });

  it.each(['"unbalanced', 'a AND OR NOT b', 'col:value', 'NEAR(x y)', 'x*', '^start', '-minus', "it's"])(
    'neutralises FTS5 syntax in %j',
    (text) => {
      const match = toFtsMatch(text);
      expect(match).not.toBeNull();
      expect(match).toMatch(/^"[^"]+"( OR "[^"]+")*$/);
    },
  );

  it('returns null when there is no word at all', () => {
    expect(toFtsMatch('')).toBeNull();
    expect(toFtsMatch('   ')).toBeNull();
    expect(toFtsMatch('🎉🚀 "" ** ()')).toBeNull();
  });

  it('keeps non-Latin words and drops duplicates', () => {
    expect(toFtsMatch('Ünïcode 日本語 ünïcode')).toBe('"ünïcode" OR "日本語"');
  });
});
