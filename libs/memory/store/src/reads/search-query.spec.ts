import { describe, expect, it } from '@jest/globals';
import { searchTerms, toFtsMatch } from './search-query.js';

describe('search terms from user text', () => {
  it('keeps the words that say what is meant, lower-cased, each once', () => {
    expect(searchTerms('When did she go to the LGBTQ support group? Support!')).toEqual(['go', 'lgbtq', 'support', 'group']);
  });

  it('keeps all the words of a query made only of stopwords', () => {
    expect(searchTerms('The Who')).toEqual(['the', 'who']);
  });

  it('drops the pieces of contractions and possessives', () => {
    expect(searchTerms("What's James's dog's name? Don't guess")).toEqual(['james', 'dog', 'name', 'guess']);
  });

  it('has no term when there is no word at all', () => {
    expect(searchTerms('')).toEqual([]);
    expect(searchTerms('🎉🚀 "" ** ()')).toEqual([]);
  });

  it('keeps non-Latin words', () => {
    expect(searchTerms('Ünïcode 日本語 ünïcode')).toEqual(['ünïcode', '日本語']);
  });
});

describe('FTS5 query from search terms', () => {
  it('quotes each term and ORs them', () => {
    expect(toFtsMatch(['docker', 'networking'])).toBe('"docker" OR "networking"');
  });

  it.each(['"unbalanced', 'a AND OR NOT b', 'col:value', 'NEAR(x y)', 'x*', '^start', '-minus', "it's"])('neutralises FTS5 syntax in %j', (text) => {
    const match = toFtsMatch(searchTerms(text));
    expect(match).not.toBeNull();
    expect(match).toMatch(/^"[^"]+"( OR "[^"]+")*$/);
  });

  it('is null without terms', () => {
    expect(toFtsMatch([])).toBeNull();
  });
});
