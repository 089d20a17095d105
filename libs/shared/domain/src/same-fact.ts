import { mostSimilar } from './similarity.js';

/** A text as a fact: lower case, accents, punctuation and extra spacing gone. */
export function normalizedFact(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)
    .join(' ');
}

/**
 * The entry among `candidates` that already says what `content` says, so that storing `content`
 * would make a second copy: the same text once case, spacing and punctuation are normalised, or
 * a near-duplicate that covers every word of it (see mostSimilar). Null when `content` adds
 * something. A candidate that says less (the new text adds a detail) is not a copy.
 */
export function existingFact<T extends { readonly content: string }>(content: string, candidates: readonly T[]): T | null {
  const fact = normalizedFact(content);
  if (fact === '') return null;
  const same = candidates.find((candidate) => normalizedFact(candidate.content) === fact);
  return same ?? mostSimilar(content, candidates, (candidate) => candidate.content)?.item ?? null;
}
