/** At most this many words of a query reach FTS5; the rest add cost, not precision. */
const MAX_TERMS = 32;

/**
 * Turns any user text into a safe FTS5 MATCH expression: words (letters, digits, marks) each quoted
 * as a string, joined with OR so BM25 ranks entries matching more of them higher. Quotes, operators
 * (AND, NEAR, *, ^, :), parentheses and emoji never reach FTS5 syntax. Null when there is no word.
 */
export function toFtsMatch(text: string): string | null {
  const words = text.normalize('NFC').match(/[\p{L}\p{N}\p{M}_]+/gu) ?? [];
  const unique = [...new Set(words.map((word) => word.toLowerCase()))].slice(0, MAX_TERMS);
  if (unique.length === 0) return null;
  return unique.map((word) => `"${word}"`).join(' OR ');
}
