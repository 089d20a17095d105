import { createHash } from 'node:crypto';
import { MemoryError, MemoryPattern } from '@engram/contracts';
import { categorizeContent, mostSimilar, type MemoryEntry, type MemorySource, type MemoryType } from '@engram/domain';
import type { ExtractExchangeData } from '@engram/jobs';
import { cleanSuggestion, explicitFacts } from './exchange-facts.js';
import { listAllActive } from './list-all.js';
import { type JobContext, type MemoryPort } from './ports.js';

export interface ExtractOutcome {
  readonly stored: readonly string[];
  readonly refreshed: readonly string[];
  /** Candidates a previous delivery of this job already handled. */
  readonly unchanged: number;
  /** Candidates a person purged from the pool meanwhile (the memory service refuses them: `gone`). */
  readonly purged: number;
}

/** The id an extracted fact gets: the same exchange and text give the same id, so a re-run stores once. */
export function extractedMemoryId(exchangeId: string, content: string): string {
  return `ext-${createHash('sha256').update(`${exchangeId}\n${content.toLowerCase()}`).digest('hex').slice(0, 16)}`;
}

/**
 * The exchange a job is about. A job enqueued before exchanges had ids carries none: its request id
 * stands in, as the facts it may already have stored were named by it.
 */
function exchangeOf(data: ExtractExchangeData): string {
  const given: unknown = (data as { exchangeId?: unknown }).exchangeId;
  return typeof given === 'string' && given !== '' ? given : data.requestId;
}

function typeFor(category: string | null): MemoryType {
  return category === 'preference' || category === 'person' ? 'USER' : 'MEMORY';
}

interface Candidate {
  readonly content: string;
  readonly source: MemorySource;
}

function candidatesOf(data: ExtractExchangeData): Candidate[] {
  const all: Candidate[] = [
    ...data.suggestions.map((text) => ({ content: cleanSuggestion(text), source: 'marker' as const })),
    ...explicitFacts(data.exchange.user).map((text) => ({ content: cleanSuggestion(text), source: 'extraction' as const })),
  ];
  const unique: Candidate[] = [];
  for (const candidate of all) {
    if (candidate.content.length === 0) continue;
    if (mostSimilar(candidate.content, unique, (other) => other.content)) continue;
    unique.push(candidate);
  }
  return unique;
}

/**
 * Stores what an exchange taught: the model's `<MEMORY_SUGGEST>` markers and facts the person
 * stated. A fact the pool already holds in other words refreshes that entry instead of adding a
 * copy. Idempotent: stored ids derive from the exchange, and a refresh already newer than the job
 * is not repeated.
 */
export async function extractExchange(memory: MemoryPort, data: ExtractExchangeData, context: JobContext): Promise<ExtractOutcome> {
  const candidates = candidatesOf(data);
  if (candidates.length === 0) return { stored: [], refreshed: [], unchanged: 0, purged: 0 };
  // The whole pool: a fact stated again long after it was stored must still find its entry.
  const pool: MemoryEntry[] = await listAllActive(memory, data.pool);
  const meta = { actor: 'worker:extract', causationId: data.requestId } as const;
  const stored: string[] = [];
  const refreshed: string[] = [];
  let unchanged = 0;
  let purged = 0;

  for (const candidate of candidates) {
    const id = extractedMemoryId(exchangeOf(data), candidate.content);
    if (pool.some((entry) => entry.id === id)) {
      unchanged++;
      continue;
    }
    const match = mostSimilar(candidate.content, pool, (entry) => entry.content);
    if (match) {
      const { lastReferenced } = match.item;
      const refreshedBefore = lastReferenced !== null && Date.parse(lastReferenced) >= context.enqueuedAt.getTime();
      if (refreshedBefore || refreshed.includes(match.item.id)) {
        unchanged++;
        continue;
      }
      await memory.call(MemoryPattern.Refresh, { pool: data.pool, ids: [match.item.id], ...meta });
      refreshed.push(match.item.id);
      continue;
    }
    const { category } = categorizeContent(candidate.content);
    let entry: MemoryEntry;
    try {
      entry = await memory.call(MemoryPattern.Store, {
        pool: data.pool,
        id,
        content: candidate.content,
        type: typeFor(category),
        category,
        source: candidate.source,
        ...meta,
      });
    } catch (error) {
      // A person purged this text (or this very fact) while the exchange waited: it stays forgotten.
      if (error instanceof MemoryError && error.code === 'gone') {
        purged++;
        continue;
      }
      throw error;
    }
    pool.push(entry);
    stored.push(entry.id);
  }
  return { stored, refreshed, unchanged, purged };
}
