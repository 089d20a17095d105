import type { HybridOutcome, SearchObserver } from '@engram/memory-store';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of the memory service, served on GET /metrics of its health port. */
export class MetricsRepository implements SearchObserver {
  readonly registry = new Registry();
  private readonly searches = new Counter({
    name: 'engram_memory_hybrid_searches_total',
    help: 'Searches with words while hybrid search is on, by how they were answered: hybrid, hybrid_partial (some entries have no vector yet) or lexical_fallback (the query could not be embedded).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly embeddingFailures = new Counter({
    name: 'engram_memory_query_embedding_failures_total',
    help: 'Search queries the embeddings endpoint did not embed in time (timeout) or answered with an error.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'engram_memory_' });
    for (const outcome of ['hybrid', 'hybrid_partial', 'lexical_fallback'] as const) this.searches.inc({ outcome }, 0);
  }

  searched(outcome: HybridOutcome): void {
    this.searches.inc({ outcome });
  }

  embeddingFailed(reason: 'timeout' | 'error'): void {
    this.embeddingFailures.inc({ reason });
  }
}
