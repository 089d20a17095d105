import { MemoryPattern, parseMemoryRequest, type MissingVectorText, type StoreVectorsRequest, type VectorsMissingRequest } from '@engram/contracts';
import { vectorFromBase64 } from '@engram/embeddings';
import { invalid } from '../writes/validation.js';
import type { VectorStore } from './vector-store.js';

/** The worker's side of hybrid search over RPC: which texts need a vector, and storing the vectors it made. */
export class VectorService {
  constructor(private readonly store: Pick<VectorStore, 'missing' | 'put' | 'poolsMissing'>) {}

  /** Pools with active entries that have no vector of `model` (for the backfill at start). */
  poolsMissing(model: string): string[] {
    return this.store.poolsMissing(model);
  }

  async missing(raw: VectorsMissingRequest): Promise<MissingVectorText[]> {
    const { pool, model, limit } = parseMemoryRequest(MemoryPattern.VectorsMissing, raw);
    return this.store.missing(pool, model, limit);
  }

  async storeVectors(raw: StoreVectorsRequest): Promise<{ readonly stored: number }> {
    const { model, vectors: items } = parseMemoryRequest(MemoryPattern.StoreVectors, raw);
    const vectors = items.map((item) => {
      try {
        return { hash: item.hash, vector: vectorFromBase64(item.vector) };
      } catch (error) {
        throw invalid(error instanceof Error ? error.message : String(error));
      }
    });
    return { stored: this.store.put(model, vectors) };
  }
}
