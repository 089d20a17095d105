import type { MissingVectorText, StoreVectorsRequest, VectorsMissingRequest } from '@engram/contracts';
import { vectorFromBase64 } from '@engram/embeddings';
import { invalid, validLimit, validPool } from '../writes/validation.js';
import type { VectorStore } from './vector-store.js';

const MISSING_DEFAULT_LIMIT = 64;
const MISSING_MAX_LIMIT = 2_048;
const STORE_MAX_VECTORS = 2_048;

/** The worker's side of hybrid search over RPC: which texts need a vector, and storing the vectors it made. */
export class VectorService {
  constructor(private readonly store: Pick<VectorStore, 'missing' | 'put' | 'poolsMissing'>) {}

  /** Pools with active entries that have no vector of `model` (for the backfill at start). */
  poolsMissing(model: string): string[] {
    return this.store.poolsMissing(validModel(model));
  }

  async missing(request: VectorsMissingRequest): Promise<MissingVectorText[]> {
    const pool = validPool(request.pool);
    const model = validModel(request.model);
    return this.store.missing(pool, model, validLimit(request.limit, MISSING_DEFAULT_LIMIT, MISSING_MAX_LIMIT));
  }

  async storeVectors(request: StoreVectorsRequest): Promise<{ readonly stored: number }> {
    const model = validModel(request.model);
    if (!Array.isArray(request.vectors) || request.vectors.length > STORE_MAX_VECTORS) {
      throw invalid(`vectors must be an array of at most ${STORE_MAX_VECTORS}`);
    }
    const vectors = request.vectors.map((item) => {
      if (typeof item?.hash !== 'string' || item.hash === '' || typeof item.vector !== 'string')
        throw invalid('each vector needs a hash and a base64 vector');
      try {
        return { hash: item.hash, vector: vectorFromBase64(item.vector) };
      } catch (error) {
        throw invalid(error instanceof Error ? error.message : String(error));
      }
    });
    return { stored: this.store.put(model, vectors) };
  }
}

function validModel(model: unknown): string {
  if (typeof model !== 'string' || model === '' || model.length > 200) throw invalid('model must be a non-empty string');
  return model;
}
