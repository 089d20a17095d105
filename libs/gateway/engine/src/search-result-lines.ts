import type { SearchHit } from '@engram/contracts';

const DAY_MS = 86_400_000;

/** How long ago, in the fewest characters a model reads right: `today`, `3d ago`, `5w ago`, `4mo ago`, `2y ago`. */
export function ageLabel(since: string, now: Date): string {
  const days = Math.floor((now.getTime() - Date.parse(since)) / DAY_MS);
  if (!(days >= 1)) return 'today';
  if (days < 14) return `${days}d ago`;
  if (days < 60) return `${Math.floor(days / 7)}w ago`;
  if (days < 730) return `${Math.floor(days / 30)}mo ago`;
  return `${Math.floor(days / 365)}y ago`;
}

/** `[id:abc] content (project, 3d ago, conf 0.8)`: what the model needs to judge a hit, in few tokens. */
export function searchResultLine(hit: SearchHit, now: Date): string {
  const { entry } = hit;
  const facts = [...(entry.category ? [entry.category] : []), ageLabel(entry.createdAt, now), `conf ${hit.effectiveConfidence.toFixed(1)}`];
  return `[id:${entry.id}] ${entry.content} (${facts.join(', ')})`;
}

/**
 * The memory_search answer: one line per hit, best first (the order given), at most `limit`.
 * Entries already in the Tier 1 block the model was given are not repeated with their facts, but
 * named (`[id:abc] content`), so a model that cites its sources can cite them too.
 */
export function searchResultText(query: string, hits: readonly SearchHit[], tier1Ids: ReadonlySet<string>, limit: number, now: Date): string {
  const fresh = hits.filter((hit) => !tier1Ids.has(hit.entry.id));
  const known = hits.filter((hit) => tier1Ids.has(hit.entry.id)).map((hit) => `[id:${hit.entry.id}] ${hit.entry.content}`);
  const shown = fresh.slice(0, limit);
  if (shown.length === 0) {
    return known.length > 0 ? `Only memories already in your memory block match "${query}":\n${known.join('\n')}` : `No memories match "${query}".`;
  }
  const also = known.length > 0 ? `\nAlso in your memory block:\n${known.join('\n')}` : '';
  return `Found ${shown.length}:\n${shown.map((hit) => searchResultLine(hit, now)).join('\n')}${also}`;
}
