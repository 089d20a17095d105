import { MemoryPattern, type MemoryContract, type MissingVectorText } from '@engram/contracts';
import { describe, expect, it } from '@jest/globals';
import { EMBED_BATCH, embedPool, type EmbedderPort, type VectorMemoryPort } from './embed-pool.js';

/** The memory side: texts without a vector until a vector for their hash is stored. */
class FakeVectors implements VectorMemoryPort {
  readonly stored = new Map<string, string>();
  constructor(private readonly texts: MissingVectorText[]) {}
  async call<P extends typeof MemoryPattern.VectorsMissing | typeof MemoryPattern.StoreVectors>(
    pattern: P,
    request: MemoryContract[P][0],
  ): Promise<MemoryContract[P][1]> {
    if (pattern === MemoryPattern.VectorsMissing) {
      const { limit = 64 } = request as MemoryContract[typeof MemoryPattern.VectorsMissing][0];
      return this.texts.filter((text) => !this.stored.has(text.hash)).slice(0, limit) as MemoryContract[P][1];
    }
    const { vectors } = request as MemoryContract[typeof MemoryPattern.StoreVectors][0];
    for (const { hash, vector } of vectors) this.stored.set(hash, vector);
    return { stored: vectors.length } as MemoryContract[P][1];
  }
}

class CountingEmbedder implements EmbedderPort {
  readonly model = 'm';
  readonly batches: string[][] = [];
  async embedBase64(texts: readonly string[]): Promise<string[]> {
    this.batches.push([...texts]);
    return texts.map((text) => Buffer.from(text).toString('base64'));
  }
}

const texts = (n: number): MissingVectorText[] => Array.from({ length: n }, (_, i) => ({ hash: `h${i}`, content: `fact ${i}` }));

describe('embedPool', () => {
  it('embeds every text without a vector, in batches, and stores each under its hash', async () => {
    const memory = new FakeVectors(texts(EMBED_BATCH + 5));
    const embedder = new CountingEmbedder();
    expect(await embedPool(memory, embedder, { pool: 'team', eventId: 'e1' })).toEqual({ embedded: EMBED_BATCH + 5, requests: 2 });
    expect(embedder.batches.map((batch) => batch.length)).toEqual([EMBED_BATCH, 5]);
    expect(memory.stored.get('h3')).toBe(Buffer.from('fact 3').toString('base64'));
  });

  it('calls the endpoint not at all when every text already has a vector', async () => {
    const memory = new FakeVectors(texts(3));
    await embedPool(memory, new CountingEmbedder(), { pool: 'team', eventId: 'e1' });
    const again = new CountingEmbedder();
    expect(await embedPool(memory, again, { pool: 'team', eventId: 'e2' })).toEqual({ embedded: 0, requests: 0 });
    expect(again.batches).toEqual([]);
  });
});
