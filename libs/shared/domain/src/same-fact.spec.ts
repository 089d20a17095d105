import { describe, expect, it } from '@jest/globals';
import { existingFact, normalizedFact } from './same-fact.js';

const entries = (...contents: string[]) => contents.map((content, index) => ({ id: `m${index}`, content }));

describe('the existing entry that already says a fact', () => {
  it('is the same text after case, spacing and punctuation are normalised', () => {
    const pool = entries('Uses zsh with oh-my-zsh', 'Deploys with Docker Compose on the NAS.');
    expect(existingFact('  deploys with docker   compose on the NAS', pool)?.id).toBe('m1');
    expect(normalizedFact('Déploie: Docker!  Compose')).toBe('deploie docker compose');
  });

  it('is a near-duplicate that covers every word of the new text', () => {
    const pool = entries('The user prefers concise answers with bullet points');
    expect(existingFact('User prefers concise answers with bullet points', pool)?.id).toBe('m0');
  });

  it('is none when the new text adds a detail the entry does not have', () => {
    const pool = entries('Deploys with docker compose');
    expect(existingFact('Deploys with docker compose on the NAS in the basement', pool)).toBeNull();
  });

  it('is none for a different fact that looks alike', () => {
    const pool = entries('The test fails without fixture 4');
    expect(existingFact('The test fails without fixture 74', pool)).toBeNull();
  });

  it('is none without candidates or without words', () => {
    expect(existingFact('anything', [])).toBeNull();
    expect(existingFact('!!!', entries('!!!'))).toBeNull();
  });
});
