import { MemoryPattern, type MemoryContract } from '@engram/contracts';
import type { EmbedPoolData } from '@engram/jobs';

type VectorPattern = typeof MemoryPattern.VectorsMissing | typeof MemoryPattern.StoreVectors;

/** The memory calls embedding needs; MemoryClient satisfies it as is. */
export interface VectorMemoryPort {
  call<P extends VectorPattern>(pattern: P, request: MemoryContract[P][0]): Promise<MemoryContract[P][1]>;
}

/** An embeddings endpoint (see @engram/embeddings); vectors come back as base64 float32s. */
export interface EmbedderPort {
  readonly model: string;
  embedBase64(texts: readonly string[]): Promise<string[]>;
}

export interface EmbedPoolOutcome {
  readonly embedded: number;
  readonly requests: number;
}

/** Texts per endpoint call. */
export const EMBED_BATCH = 64;
/** A run stops after this many batches and leaves the rest to the next job (a huge backfill does not hold one job for hours). */
const MAX_BATCHES = 200;

/**
 * Embeds the texts of a pool that have no vector of the endpoint's model yet, a batch per request,
 * and hands the vectors to the memory service. Texts are asked for by content hash, so a text is
 * sent once however many entries, replays or jobs share it. A failure fails the job, which retries.
 */
export async function embedPool(memory: VectorMemoryPort, embedder: EmbedderPort, data: EmbedPoolData): Promise<EmbedPoolOutcome> {
  let embedded = 0;
  let requests = 0;
  while (requests < MAX_BATCHES) {
    const missing = await memory.call(MemoryPattern.VectorsMissing, { pool: data.pool, model: embedder.model, limit: EMBED_BATCH });
    if (missing.length === 0) break;
    const vectors = await embedder.embedBase64(missing.map((text) => text.content));
    requests++;
    await memory.call(MemoryPattern.StoreVectors, {
      model: embedder.model,
      vectors: missing.map((text, index) => ({ hash: text.hash, vector: vectors[index] ?? '' })),
    });
    embedded += missing.length;
    if (missing.length < EMBED_BATCH) break;
  }
  return { embedded, requests };
}
