import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3-multiple-ciphers';
import type { Embedder } from '@engram/embeddings';
import { vectorToBase64 } from '@engram/embeddings';
import { ClusteredVectors, silentLogger, tempDataDir } from '@engram/testing';
import type { MemoryService } from '../writes/memory-service.js';
import { openMemoryService, type MemoryServiceOptions } from '../data-dir/open-memory-service.js';

const DIMENSIONS = 1_536;
const vectors = new ClusteredVectors({ dimensions: DIMENSIONS, topics: 30, subtopicsPerTopic: 10 });

/** Texts map to clustered vectors; a text starting with "unrelated" to one that nothing stored is near. */
class ClusteredEmbedder implements Embedder {
  constructor(readonly model: string) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => (text.startsWith('unrelated') ? vectors.unrelated(text) : vectors.vector(text)));
  }
}

let dir: ReturnType<typeof tempDataDir>;
let service: MemoryService;

type Embeddings = NonNullable<MemoryServiceOptions['embeddings']>;
const open = (embeddings: Partial<Embeddings> = {}): Promise<MemoryService> =>
  openMemoryService({
    dataDir: dir.path,
    tier1MaxChars: 400,
    logger: silentLogger(),
    embeddings: { embedder: new ClusteredEmbedder('clustered-a'), queryTimeoutMs: 1_000, minSimilarity: 0.3, ...embeddings },
  });

async function storeTexts(pool: string, texts: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < texts.length; start += 500) {
    const stored = await Promise.all(texts.slice(start, start + 500).map((content) => service.store({ pool, actor: 'user', content })));
    ids.push(...stored.map((entry) => entry.id));
  }
  return ids;
}

/** What the worker does: every text of the pool without a vector of the model gets one. */
async function embedPool(pool: string, embedder: Embedder): Promise<void> {
  for (;;) {
    const missing = await service.vectors!.missing({ pool, model: embedder.model, limit: 2_048 });
    if (missing.length === 0) return;
    const made = await embedder.embed(missing.map((text) => text.content));
    await service.vectors!.storeVectors({
      model: embedder.model,
      vectors: missing.map((text, i) => ({ hash: text.hash, vector: vectorToBase64(made[i]!) })),
    });
  }
}

const search = async (pool: string, query: string, extra: { includeArchived?: boolean } = {}): Promise<string[]> =>
  (await service.search({ pool, query, limit: 10, ...extra })).map((hit) => hit.entry.content);

function vectorCount(model: string): number {
  const db = new Database(join(dir.path, 'vectors.db'), { readonly: true });
  try {
    return db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM embeddings WHERE model = ?').get(model)!.n;
  } finally {
    db.close();
  }
}

beforeEach(async () => {
  dir = tempDataDir();
  service = await open();
});
afterEach(async () => {
  await service.close();
  dir.remove();
});

describe('hybrid search over quantised vectors', () => {
  it("gives the exact scan's top 10 for >= 95% of entries on 1,000 clustered 1,536-dimension vectors", async () => {
    // No floor: every query gets its full 10 (the hardest case for the comparison).
    await service.close();
    service = await open({ minSimilarity: -1 });
    await storeTexts(
      'big',
      Array.from({ length: 1_000 }, (_, i) => `fact ${i}`),
    );
    await embedPool('big', new ClusteredEmbedder('clustered-a'));
    // Queries share no word with the entries: the ranking is the vectors' alone.
    const queries = Array.from({ length: 30 }, (_, i) => `question ${i}`);
    const quantised = await Promise.all(queries.map((query) => search('big', query)));
    await service.close();
    service = await open({ scan: 'exact', minSimilarity: -1 });
    const exact = await Promise.all(queries.map((query) => search('big', query)));
    let agreeing = 0;
    exact.forEach((top, i) => (agreeing += top.filter((content) => quantised[i]!.includes(content)).length));
    expect(exact.every((top) => top.length === 10)).toBe(true);
    expect(agreeing / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
  });

  it("never returns another pool's entries, however near their vectors", async () => {
    await storeTexts('mine', ['fact 1', 'fact 2']);
    // The other pool holds the very vector of the query.
    await storeTexts('theirs', ['question 7', ...Array.from({ length: 300 }, (_, i) => `fact ${i + 10}`)]);
    await embedPool('mine', new ClusteredEmbedder('clustered-a'));
    await embedPool('theirs', new ClusteredEmbedder('clustered-a'));
    const found = await service.search({ pool: 'mine', query: 'question 7', limit: 10 });
    expect(found.every((hit) => hit.entry.pool === 'mine')).toBe(true);
    expect(await search('theirs', 'question 7')).toContain('question 7');
  });

  it('returns no vector neighbour below the similarity floor: a question nothing answers finds nothing', async () => {
    await storeTexts(
      'floor',
      Array.from({ length: 400 }, (_, i) => `fact ${i}`),
    );
    await embedPool('floor', new ClusteredEmbedder('clustered-a'));
    expect(await search('floor', 'unrelated question about tides')).toEqual([]);
    // A question about a stored subtopic still finds its texts (those of its topic, ~0.35, partly).
    expect((await search('floor', 'question 3')).length).toBeGreaterThan(0);
    await service.close();
    service = await open({ minSimilarity: -1 });
    expect(await search('floor', 'unrelated question about tides')).toHaveLength(10);
  });

  it('leaves archived entries out unless asked, and follows restores and purges', async () => {
    const [id] = await storeTexts('arch', ['question 5', 'fact 1']);
    await embedPool('arch', new ClusteredEmbedder('clustered-a'));
    expect((await search('arch', 'question 5'))[0]).toBe('question 5');
    await service.archive({ pool: 'arch', actor: 'user', id: id! });
    expect(await search('arch', 'question 5')).not.toContain('question 5');
    expect((await search('arch', 'question 5', { includeArchived: true }))[0]).toBe('question 5');
    await service.restore({ pool: 'arch', actor: 'user', id: id! });
    expect((await search('arch', 'question 5'))[0]).toBe('question 5');
    await service.purge({ pool: 'arch', actor: 'user', id: id! });
    expect(await search('arch', 'question 5', { includeArchived: true })).not.toContain('question 5');
  });

  it('finds an entry by its new text after an update, and rebuilds its index on a restart', async () => {
    const [id] = await storeTexts('upd', ['fact 1', 'fact 2']);
    await embedPool('upd', new ClusteredEmbedder('clustered-a'));
    await service.update({ pool: 'upd', actor: 'user', id: id!, content: 'question 9' });
    await embedPool('upd', new ClusteredEmbedder('clustered-a'));
    expect((await search('upd', 'question 9'))[0]).toBe('question 9');
    await service.close();
    service = await open();
    expect((await search('upd', 'question 9'))[0]).toBe('question 9');
  });

  it("deletes a model's vectors once the newly configured model has embedded every active entry, not before", async () => {
    await storeTexts('p1', ['fact 1', 'fact 2', 'fact 3']);
    await storeTexts('p2', ['fact 4']);
    await embedPool('p1', new ClusteredEmbedder('clustered-a'));
    await embedPool('p2', new ClusteredEmbedder('clustered-a'));
    expect(vectorCount('clustered-a')).toBe(4);

    await service.close();
    service = await open({ embedder: new ClusteredEmbedder('clustered-b') });
    await embedPool('p1', new ClusteredEmbedder('clustered-b'));
    // p2 has no vector of the new model yet: the old model's stay (a switch back would cost no call).
    expect(vectorCount('clustered-a')).toBe(4);
    await embedPool('p2', new ClusteredEmbedder('clustered-b'));
    expect(vectorCount('clustered-a')).toBe(0);
    expect(vectorCount('clustered-b')).toBe(4);
    expect((await search('p1', 'fact 2'))[0]).toBe('fact 2');
  });

  it('deletes the old vectors at start when the newly configured model already covers every entry', async () => {
    await storeTexts('p', ['fact 1', 'fact 2']);
    await embedPool('p', new ClusteredEmbedder('clustered-a'));
    // The worker restarted first with the new model and embedded the pool; memory still runs with the old one.
    await embedPool('p', new ClusteredEmbedder('clustered-b'));
    expect(vectorCount('clustered-a')).toBe(2);
    await service.close();
    service = await open({ embedder: new ClusteredEmbedder('clustered-b') });
    expect(vectorCount('clustered-a')).toBe(0);
    expect((await search('p', 'fact 2'))[0]).toBe('fact 2');
  });
});
