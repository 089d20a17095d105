import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { vectorToBase64, type Embedder } from '@engram/embeddings';
import { EMBED_BATCH, embedPool, type EmbedderPort } from '@engram/worker-handlers';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

const MODEL = 'test-model';

/** Four dimensions from the text's characters: enough for the store, which checks only shape. */
function vectorOf(text: string): Float32Array {
  return new Float32Array([text.length, text.charCodeAt(0), text.charCodeAt(text.length - 1), 1]);
}

/** The embeddings endpoint as the worker sees it, recording each batch it is asked for. */
class CountingEmbedder implements EmbedderPort {
  readonly model = MODEL;
  readonly batches: string[][] = [];
  async embedBase64(texts: readonly string[]): Promise<string[]> {
    this.batches.push([...texts]);
    return texts.map((text) => vectorToBase64(vectorOf(text)));
  }
}

/** The memory service embeds search queries with the same model. */
const queryEmbedder: Embedder = { model: MODEL, embed: async (texts) => texts.map(vectorOf) };

describe('the worker’s embedding job against the real memory service', () => {
  const under = memoryServicePerTest({ embeddings: { embedder: queryEmbedder, queryTimeoutMs: 1_000, minSimilarity: 0 } });
  const memory = memoryInProcess(() => under.service);
  const storeAll = (contents: readonly string[]) =>
    Promise.all(contents.map((content) => memory.call(MemoryPattern.Store, { pool: 'team', actor: 'user', content })));
  const missing = () => memory.call(MemoryPattern.VectorsMissing, { pool: 'team', model: MODEL, limit: 1_000 });

  it('embeds every text without a vector, in batches, and the memory service has a vector for each after', async () => {
    await storeAll(Array.from({ length: EMBED_BATCH + 5 }, (_, i) => `fact number ${i}`));
    const embedder = new CountingEmbedder();
    expect(await embedPool(memory, embedder, { pool: 'team', eventId: 'e1' })).toEqual({ embedded: EMBED_BATCH + 5, requests: 2 });
    expect(embedder.batches.map((batch) => batch.length)).toEqual([EMBED_BATCH, 5]);
    expect(await missing()).toEqual([]);
  });

  it('sends a text two entries share once', async () => {
    await storeAll(['Deploys go through Actions', 'The CI runs on Fridays']);
    await memory.call(MemoryPattern.Store, { pool: 'team', actor: 'user', content: 'Deploys go through Actions', id: 'same-text' });
    const embedder = new CountingEmbedder();
    expect(await embedPool(memory, embedder, { pool: 'team', eventId: 'e1' })).toEqual({ embedded: 2, requests: 1 });
  });

  it('calls the endpoint not at all when every text already has a vector', async () => {
    await storeAll(['one fact', 'another fact', 'a third fact']);
    await embedPool(memory, new CountingEmbedder(), { pool: 'team', eventId: 'e1' });
    const again = new CountingEmbedder();
    expect(await embedPool(memory, again, { pool: 'team', eventId: 'e2' })).toEqual({ embedded: 0, requests: 0 });
    expect(again.batches).toEqual([]);
  });
});
