import { DAY_MS, decayedConfidence, type Category } from '@engram/domain';

/**
 * How a search ranks a match: relevance × (0.5 + 0.5 × effective confidence), relevance being
 * FTS5's BM25 negated (FTS5 reports it negative, lower is better). Among similar matches the
 * fresher, more trusted entry wins. `days` is the time since the decay anchor.
 */
export function searchScore(bm25: number, confidence: number, category: Category | null, days: number): number {
  return -bm25 * (0.5 + 0.5 * decayedConfidence(confidence, category, days));
}

/** Julian day number of a time, as SQLite's julianday() gives it. */
export function julianDay(time: Date): number {
  return time.getTime() / DAY_MS + 2_440_587.5;
}
