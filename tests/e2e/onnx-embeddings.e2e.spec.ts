import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3-multiple-ciphers';
import { type MemoryClient, MemoryPattern, readInternalToken } from '@engram/contracts';
import { eventually, tempDataDir, writeSentenceEncoder } from '@engram/testing';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startMemory, startWorker, type RunningMemory, type RunningWorker } from '../support/stack.js';

const user = 'user' as const;
const PUPPY = 'Has a puppy named Biscuit';
const TEXTS = ['Drives a blue sedan to the office every day', 'Prefers PostgreSQL for new services', PUPPY];
/**
 * Shares no word with any entry, so words alone find nothing; the test model spells words letter by
 * letter, so its vector is nearest to PUPPY's (random weights carry no meaning, only spelling).
 */
const MISSPELLED = 'puppi namd biskit';

describe('hybrid search with EMBEDDINGS_MODEL_DIR (a model folder run in-process, no embeddings server)', () => {
  const model = tempDataDir('engram-model-');
  let redis: TestRedis;
  let memory: RunningMemory;
  let worker: RunningWorker;
  let client: MemoryClient;

  const search = async (pool: string, query: string): Promise<string[]> =>
    (await client.call(MemoryPattern.Search, { pool, query, limit: 3 })).map((hit) => hit.entry.content);
  const metrics = async (): Promise<string> =>
    (
      await fetch(`http://127.0.0.1:${memory.healthPort}/metrics`, { headers: { authorization: `Bearer ${readInternalToken(memory.dataDir)!}` } })
    ).text();
  /** Texts the worker's embedding jobs embedded, from their `job completed` lines (debug). */
  const embeddedByWorker = (): number =>
    worker.process
      .output()
      .split('\n')
      .filter((line) => line.includes('"job":"embed-pool"') && line.includes('job completed'))
      .reduce((sum, line) => sum + (JSON.parse(line) as { result: { embedded: number } }).result.embedded, 0);
  const storedVectors = (): { model: string; bytes: number }[] => {
    const db = new Database(join(memory.dataDir, 'vectors.db'), { readonly: true });
    try {
      return db.prepare<[], { model: string; bytes: number }>('SELECT model, length(vector) AS bytes FROM embeddings').all();
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    writeSentenceEncoder(model.path, { maxSeqLength: 64 });
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, EMBEDDINGS_MODEL_DIR: model.path, EMBEDDINGS_THREADS: '1' };
    memory = await startMemory(env);
    worker = await startWorker({ ...env, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off', LOG_LEVEL: 'debug' });
    client = memory.client(10_000);
  });

  afterAll(async () => {
    await client?.close();
    await worker?.stop();
    await memory?.stop();
    await redis?.stop();
    model.remove();
  });

  it('embeds stored entries in the worker and finds them by vector fused with words', async () => {
    for (const text of TEXTS) await client.call(MemoryPattern.Store, { pool: 'home', actor: user, content: text });
    await eventually(() => expect(storedVectors()).toHaveLength(TEXTS.length), { timeout: 30_000 });
    // Named by the folder's content; the tiny model's hidden size is 32: 32 float32s.
    for (const vector of storedVectors()) expect(vector).toEqual({ model: expect.stringMatching(/^onnx-[0-9a-f]{16}$/), bytes: 32 * 4 });

    // The memory service embedded the query itself: by words nothing matches, by vector PUPPY is nearest.
    expect((await search('home', MISSPELLED))[0]).toBe(PUPPY);
    // Words still rank: an exact word match comes first.
    expect((await search('home', 'PostgreSQL'))[0]).toBe('Prefers PostgreSQL for new services');
    const text = await metrics();
    expect(text).toMatch(/engram_memory_hybrid_searches_total\{outcome="hybrid"\} [1-9]/);
    expect(text).not.toMatch(/engram_memory_hybrid_searches_total\{outcome="lexical_fallback"\} [1-9]/);
  });

  it('embeds a text once: the same text stored in another pool gets no second run of the model', async () => {
    await eventually(() => expect(embeddedByWorker()).toBe(TEXTS.length), { timeout: 30_000 });
    await client.call(MemoryPattern.Store, { pool: 'work', actor: user, content: PUPPY });
    await client.call(MemoryPattern.Store, { pool: 'work', actor: user, content: 'Writes release notes on Fridays' });
    await eventually(() => expect(storedVectors()).toHaveLength(TEXTS.length + 1), { timeout: 30_000 });
    await eventually(async () => expect((await search('work', MISSPELLED))[0]).toBe(PUPPY), { timeout: 30_000 });
    // Only the new text was embedded; PUPPY's vector, stored under its content hash, serves both pools.
    // The job's 'completed' line comes after its vectors are stored (and found): waited for, then counted.
    await eventually(() => expect(embeddedByWorker()).toBeGreaterThanOrEqual(TEXTS.length + 1), { timeout: 10_000 });
    expect(embeddedByWorker()).toBe(TEXTS.length + 1);
  });

  it('refuses to start on a folder it cannot use, naming the variable and the file', async () => {
    const empty = tempDataDir('engram-model-');
    try {
      await expect(startMemory({ REDIS_URL: redis.url, EMBEDDINGS_MODEL_DIR: empty.path })).rejects.toThrow(
        `invalid configuration: EMBEDDINGS_MODEL_DIR: ${empty.path}: no model.onnx (nor onnx/model.onnx) in the folder`,
      );
    } finally {
      empty.remove();
    }
  });
});
