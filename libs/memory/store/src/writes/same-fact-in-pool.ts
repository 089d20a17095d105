import { existingFact, type MemoryEntry } from '@engram/domain';
import type { MemoryQueries } from '../projection/memory-queries.js';
import { searchTerms } from '../reads/search-query.js';

/** How many of the pool's lexically closest active entries are compared: a copy ranks near the top. */
const CANDIDATES = 20;

/**
 * The active entry of the pool that already says `content` (see existingFact), or null. The whole
 * pool is searched, not a recent window: a fact stated again long after it was stored must still
 * find its entry.
 */
export function sameFactInPool(queries: Pick<MemoryQueries, 'lexicalSearch' | 'get'>, pool: string, content: string): MemoryEntry | null {
  const hits = queries.lexicalSearch({ pool, terms: searchTerms(content) }, CANDIDATES);
  const candidates = hits.flatMap((hit) => {
    const entry = queries.get(hit.id);
    return entry && entry.pool === pool && !entry.isArchived ? [entry] : [];
  });
  return existingFact(content, candidates);
}
