import { STOPWORDS } from './stopwords.js';

/** At most this many words of a query reach FTS5; the rest add cost, not precision. */
const MAX_TERMS = 32;

/**
 * The words of any user text that a search looks for: letters, digits and marks, lower-cased,
 * each once, stopwords dropped; when nothing but stopwords is left ("the who"), all the words.
 * Empty when there is no word at all.
 */
export function searchTerms(text: string): string[] {
  const words = text.normalize('NFC').match(/[\p{L}\p{N}\p{M}_]+/gu) ?? [];
  const unique = [...new Set(words.map((word) => word.toLowerCase()))];
  const meaningful = unique.filter((word) => !STOPWORDS.has(word));
  return (meaningful.length > 0 ? meaningful : unique).slice(0, MAX_TERMS);
}

/**
 * A safe FTS5 MATCH expression for search terms: each quoted as a string, joined with OR (BM25
 * then ranks entries matching more of them higher) or AND (entries with every term). Quotes, operators (AND, NEAR, *, ^, :), parentheses
 * and emoji never reach FTS5 syntax. Null when there is no term.
 */
export function toFtsMatch(terms: readonly string[], join: 'OR' | 'AND' = 'OR'): string | null {
  if (terms.length === 0) return null;
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(` ${join} `);
}
