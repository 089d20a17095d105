import type { SearchHit } from '@engram/contracts';
import { effectiveConfidence, type Category, type MemoryEntry } from '@engram/domain';
import type { Embedder } from '@engram/embeddings';
import type { Logger } from 'pino';
import { reciprocalRankFusion } from './reciprocal-rank-fusion.js';
import type { VectorStore } from './vector-store.js';

/**
 * How a search with words was answered: `hybrid` (words and meaning, every entry has a vector),
 * `hybrid_partial` (some entries have no vector yet; words alone find those), `lexical_fallback`
 * (the query could not be embedded in time: words alone).
 */
export type HybridOutcome = 'hybrid' | 'hybrid_partial' | 'lexical_fallback';

/** Told of every search with words and of every failed query embedding (the memory service's /metrics). */
export interface SearchObserver {
  searched(outcome: HybridOutcome): void;
  embeddingFailed(reason: 'timeout' | 'error'): void;
}

export interface HybridSearchDeps {
  readonly vectors: Pick<VectorStore, 'nearest' | 'missingCount'>;
  readonly embedder: Embedder;
  readonly queryTimeoutMs: number;
  /** Vector neighbours less similar (cosine) than this are not returned; 0 or below: every neighbour. */
  readonly minSimilarity: number;
  readonly entry: (id: string) => MemoryEntry | undefined;
  readonly logger: Logger;
  readonly observer?: SearchObserver;
}

export interface HybridQuery {
  readonly pool: string;
  readonly query: string;
  readonly limit: number;
  readonly category?: Category;
  readonly includeArchived: boolean;
  readonly now: Date;
}

/** How deep each ranking goes before fusion: the right entry is often below the top few of one of them. */
const FUSION_DEPTH = 50;
/** Query vectors kept (a model asks the same few questions again and again in one conversation). */
const QUERY_CACHE_SIZE = 1_000;
/** A pool's count of entries without a vector is looked up at most this often. */
const MISSING_CHECK_MS = 30_000;
/** Fallbacks are logged at most this often (a dead endpoint would otherwise log every search). */
const FALLBACK_LOG_MS = 60_000;

/**
 * Hybrid retrieval: the lexical ranking fused (reciprocal rank fusion) with the entries nearest to
 * the query's embedding. The query is embedded here, in the memory service, with a short deadline:
 * when the endpoint is down, slow or answers an error, the search answers by words alone, and
 * says so in the logs and metrics. Vectors of entries are made by the worker, never on this path.
 */
export class HybridSearch {
  private readonly queryVectors = new Map<string, Float32Array>();
  private readonly missingChecked = new Map<string, { at: number; missing: number }>();
  private lastFallbackLog = Number.NEGATIVE_INFINITY;
  private fallbacksSinceLog = 0;

  constructor(private readonly deps: HybridSearchDeps) {}

  async search(query: HybridQuery, lexical: (depth: number) => SearchHit[]): Promise<SearchHit[]> {
    const depth = Math.max(FUSION_DEPTH, query.limit);
    const byWords = lexical(depth);
    let near: { id: string }[];
    try {
      const vector = await this.queryVector(query.query);
      near = this.deps.vectors.nearest({
        pool: query.pool,
        vector,
        limit: depth,
        minSimilarity: this.deps.minSimilarity,
        includeArchived: query.includeArchived,
        ...(query.category ? { category: query.category } : {}),
      });
    } catch (error) {
      this.fallBack(query.pool, error);
      return byWords.slice(0, query.limit);
    }
    this.deps.observer?.searched(this.missing(query.pool) > 0 ? 'hybrid_partial' : 'hybrid');

    const lexicalHits = new Map(byWords.map((hit) => [hit.entry.id, hit]));
    const fused = reciprocalRankFusion([byWords.map((hit) => hit.entry.id), near.map((hit) => hit.id)]);
    const hits: SearchHit[] = [];
    for (const { id, score } of fused) {
      if (hits.length === query.limit) break;
      const entry = lexicalHits.get(id)?.entry ?? this.deps.entry(id);
      if (!entry) continue;
      hits.push({ entry, score, effectiveConfidence: lexicalHits.get(id)?.effectiveConfidence ?? effectiveConfidence(entry, query.now) });
    }
    return hits;
  }

  private async queryVector(text: string): Promise<Float32Array> {
    const cached = this.queryVectors.get(text);
    if (cached) {
      // Least recently used goes first: re-insert on use.
      this.queryVectors.delete(text);
      this.queryVectors.set(text, cached);
      return cached;
    }
    const [vector] = await this.deps.embedder.embed([text], { timeoutMs: this.deps.queryTimeoutMs });
    if (!vector) throw new Error('the embeddings endpoint answered no vector');
    this.queryVectors.set(text, vector);
    if (this.queryVectors.size > QUERY_CACHE_SIZE) this.queryVectors.delete(this.queryVectors.keys().next().value as string);
    return vector;
  }

  /** Entries of the pool without a vector of the model, as of at most MISSING_CHECK_MS ago; logged when some are. */
  private missing(pool: string): number {
    const now = Date.now();
    const checked = this.missingChecked.get(pool);
    if (checked && now - checked.at < MISSING_CHECK_MS) return checked.missing;
    const missing = this.deps.vectors.missingCount(pool, this.deps.embedder.model);
    this.missingChecked.set(pool, { at: now, missing });
    if (missing > 0) {
      this.deps.logger.info(
        { pool, missing, model: this.deps.embedder.model },
        'entries without a vector yet are found by words alone until the worker embeds them',
      );
    }
    return missing;
  }

  private fallBack(pool: string, error: unknown): void {
    const timedOut = error instanceof Error && /timed? ?out/i.test(`${error.name} ${error.message}`);
    this.deps.observer?.embeddingFailed(timedOut ? 'timeout' : 'error');
    this.deps.observer?.searched('lexical_fallback');
    this.fallbacksSinceLog++;
    const now = Date.now();
    if (now - this.lastFallbackLog < FALLBACK_LOG_MS) return;
    this.deps.logger.warn(
      { err: error, pool, fallbacks: this.fallbacksSinceLog, timeoutMs: this.deps.queryTimeoutMs },
      'could not embed the search query; answered by words alone (lexical search)',
    );
    this.lastFallbackLog = now;
    this.fallbacksSinceLog = 0;
  }
}
