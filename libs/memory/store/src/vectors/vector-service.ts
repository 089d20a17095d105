import {
  MemoryError,
  MemoryPattern,
  parseMemoryRequest,
  type MissingVectorText,
  type StoreVectorsRequest,
  type VectorsMissingRequest,
} from '@engram/contracts';
import { vectorFromBase64 } from '@engram/embeddings';
import { invalid } from '../writes/validation.js';
import type { VectorStore } from './vector-store.js';
import type { DiskFull } from '../data-dir/disk-full.js';
import { isOutOfSpace, messageOf } from '../data-dir/out-of-space.js';

/** Whether the data disk takes writes (see DiskFull): vectors are written to the same disk as everything else. */
export type WritesOnDisk = Pick<DiskFull, 'refusal' | 'enter'>;

/** The worker's side of hybrid search over RPC: which texts need a vector, and storing the vectors it made. */
export class VectorService {
  constructor(
    private readonly store: Pick<VectorStore, 'missing' | 'put' | 'poolsMissing'>,
    private readonly disk: WritesOnDisk | null = null,
  ) {}

  /** The same service, its writes refused while the data disk is full, and its own failure for want of space stopping the others. */
  onDisk(disk: WritesOnDisk): VectorService {
    return new VectorService(this.store, disk);
  }

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
    const refusal = this.disk?.refusal();
    if (refusal) throw refusal;
    try {
      return { stored: this.store.put(model, vectors) };
    } catch (error) {
      if (!isOutOfSpace(error)) throw error;
      // One transaction: it rolled back, and the worker's job sends them again.
      this.disk?.enter(error);
      throw new MemoryError('unavailable', `the data disk is full (${messageOf(error)}): the vectors were not stored`);
    }
  }
}
