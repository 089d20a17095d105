import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type MemoryClient, MemoryPattern, readInternalToken } from '@engram/contracts';
import { contentHash } from '@engram/memory-store';
import Database from 'better-sqlite3-multiple-ciphers';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { repoRoot } from '../support/compose.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { embed, ScriptedEmbeddings } from '../support/scripted-embeddings.js';
import { startMemory, startWorker, type RunningMemory, type RunningWorker } from '../support/stack.js';

const run = promisify(execFile);
const user = 'user' as const;
const pool = 'hybrid';
const SEDAN = 'Drives a blue sedan to the office every day';
// Shares no word with SEDAN; only its meaning (the scripted model puts "automobile" and "sedan" together).
const MEANING_QUERY = 'which automobile';
// Shares neither a word nor a concept with any stored text.
const NOTHING_ANSWERS = 'favourite opera singer';
const engram = join(repoRoot, 'apps/memory/bin/engram.js');

describe('hybrid search through an embeddings endpoint', () => {
  let redis: TestRedis;
  let embeddings: ScriptedEmbeddings;
  let memory: RunningMemory;
  let worker: RunningWorker;
  let client: MemoryClient;
  let env: Record<string, string>;

  const connect = (running: RunningMemory): MemoryClient => running.client(10_000);
  const search = async (query: string): Promise<string[]> =>
    (await client.call(MemoryPattern.Search, { pool, query, limit: 3 })).map((hit) => hit.entry.content);
  const metrics = async (): Promise<string> =>
    (
      await fetch(`http://127.0.0.1:${memory.healthPort}/metrics`, { headers: { authorization: `Bearer ${readInternalToken(memory.dataDir)!}` } })
    ).text();
  const counter = (text: string, outcome: string): number =>
    Number(new RegExp(`engram_memory_hybrid_searches_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 'NaN');

  beforeAll(async () => {
    redis = await startRedis();
    embeddings = await ScriptedEmbeddings.start({ apiKey: 'sk-embed' });
    env = {
      REDIS_URL: redis.url,
      EMBEDDINGS_BASE_URL: embeddings.baseUrl,
      EMBEDDINGS_API_KEY: 'sk-embed',
      EMBEDDINGS_MODEL: 'scripted-embed-1',
      EMBEDDINGS_QUERY_TIMEOUT_MS: '1500',
    };
    memory = await startMemory({ ...env, REDIS_URL: redis.url });
    worker = await startWorker({ ...env, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off' });
    client = connect(memory);
  });

  afterAll(async () => {
    await client?.close();
    await worker?.stop();
    await memory?.stop();
    await embeddings?.close();
    await redis?.stop();
  });

  it('finds an entry by meaning when the query shares no word with it, once the worker has embedded it', async () => {
    await client.call(MemoryPattern.Store, { pool, actor: user, content: SEDAN });
    await client.call(MemoryPattern.Store, { pool, actor: user, content: 'Prefers PostgreSQL for new services' });
    await client.call(MemoryPattern.Store, { pool, actor: user, content: 'Has a puppy named Biscuit' });
    await eventually(async () => expect(await search(MEANING_QUERY)).toContain(SEDAN), { timeout: 20_000 });
    expect((await search(MEANING_QUERY))[0]).toBe(SEDAN);
    // Each stored text went to the endpoint once, in batches, never on the write path.
    await eventually(() => expect(embeddings.inputs).toContain('Has a puppy named Biscuit'), { timeout: 20_000 });
    for (const text of [SEDAN, 'Prefers PostgreSQL for new services', 'Has a puppy named Biscuit']) {
      expect(embeddings.inputs.filter((input) => input === text)).toHaveLength(1);
    }
    const text = await metrics();
    // Searched while the third entry still had no vector: found by words alone, counted as partial.
    expect(counter(text, 'hybrid') + counter(text, 'hybrid_partial')).toBeGreaterThan(0);
  });

  it('answers by words alone when the endpoint fails or does not answer in time, and says so in /metrics', async () => {
    // The query's embedding is cached; a new query needs the endpoint.
    for (const mode of ['error', 'hang'] as const) {
      embeddings.mode = mode;
      const before = counter(await metrics(), 'lexical_fallback');
      expect(await search(`which automobile ${mode}`)).toEqual([]);
      expect(await search(`blue sedan ${mode}`)).toEqual([SEDAN]);
      expect(counter(await metrics(), 'lexical_fallback')).toBe(before + 2);
    }
    const text = await metrics();
    expect(text).toMatch(/engram_memory_query_embedding_failures_total\{reason="error"\} [1-9]/);
    expect(text).toMatch(/engram_memory_query_embedding_failures_total\{reason="timeout"\} [1-9]/);
    embeddings.mode = 'ok';
    expect((await search(MEANING_QUERY))[0]).toBe(SEDAN);
  });

  it('returns no vector neighbour less similar than EMBEDDINGS_MIN_SIMILARITY (default 0.3): a question nothing answers finds nothing', async () => {
    const cosine = (a: Float32Array, b: Float32Array): number => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
    const stored = [SEDAN, 'Prefers PostgreSQL for new services', 'Has a puppy named Biscuit'];
    // The scripted model's similarities: unrelated texts 0 (below the floor), the automobile question and the sedan 0.71.
    for (const text of stored) expect(cosine(embed(NOTHING_ANSWERS), embed(text))).toBeLessThan(0.3);
    expect(cosine(embed(MEANING_QUERY), embed(SEDAN))).toBeGreaterThan(0.7);
    expect(await search(NOTHING_ANSWERS)).toEqual([]);
    expect(await search(MEANING_QUERY)).toEqual([SEDAN]);
  });

  it('keeps the vectors through `engram replay`: search by meaning works again without new endpoint calls for entries', async () => {
    const dataDir = memory.dataDir;
    await client.close();
    await worker.stop();
    await memory.stop({ keepData: true });
    const replay = await run('node', [join(repoRoot, 'apps/memory/bin/engram.js'), 'replay', '--data-dir', dataDir], { cwd: repoRoot });
    expect(replay.stdout).toMatch(/replayed \d+ events applied/);

    const inputsBefore = embeddings.inputs.length;
    memory = await startMemory({ ...env, REDIS_URL: redis.url }, { dataDir });
    worker = await startWorker({ ...env, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off' });
    client = connect(memory);
    expect((await search(MEANING_QUERY))[0]).toBe(SEDAN);
    // Only the query was embedded (it was cached by the previous process, not by this one).
    expect(embeddings.inputs.slice(inputsBefore)).toEqual([MEANING_QUERY]);
  });

  it('`engram verify` reports active entries without a vector of the configured model', async () => {
    const verify = async (model: string): Promise<string> =>
      (
        await run('node', [engram, 'verify', '--data-dir', memory.dataDir], {
          cwd: repoRoot,
          env: { ...process.env, EMBEDDINGS_BASE_URL: embeddings.baseUrl, EMBEDDINGS_MODEL: model },
        })
      ).stdout;
    await client.close();
    await worker.stop();
    await memory.stop({ keepData: true });
    expect(await verify('scripted-embed-1')).toMatch(/vectors: every one of 3 active entries has a vector of scripted-embed-1/);
    // A model nothing was embedded with yet: every entry lacks one, and verify still passes (exit 0).
    expect(await verify('scripted-embed-2')).toMatch(/^ok: [\s\S]*vectors: 3 of 3 active entries have no vector of scripted-embed-2 yet/);
    memory = await startMemory({ ...env, REDIS_URL: redis.url }, { dataDir: memory.dataDir });
    worker = await startWorker({ ...env, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off' });
    client = connect(memory);
  });

  it('`engram backup` copies vectors.db: a restore searches by meaning without sending stored texts to the endpoint again', async () => {
    const backup = join(mkdtempSync(join(tmpdir(), 'engram-backup-')), 'copy');
    const restored = mkdtempSync(join(tmpdir(), 'engram-restored-'));
    try {
      const made = await run('node', [engram, 'backup', '--to', backup, '--data-dir', memory.dataDir], { cwd: repoRoot });
      expect(made.stdout).toMatch(/backed up/);
      // Self-contained copies: no -wal/-shm beside either database.
      expect(readdirSync(backup).sort()).toEqual(['backup.json', 'engram.db', 'events', 'pools', 'vectors.db']);
      await run('node', [engram, 'restore', '--from', backup, '--data-dir', restored], { cwd: repoRoot });
      const inputsBefore = embeddings.inputs.length;
      const second = await startMemory({ ...env, REDIS_URL: redis.url }, { dataDir: restored });
      const secondClient = second.client(10_000);
      try {
        const hits = await secondClient.call(MemoryPattern.Search, { pool, query: `${MEANING_QUERY} restored`, limit: 3 });
        expect(hits[0]?.entry.content).toBe(SEDAN);
        // Only the query went to the endpoint.
        expect(embeddings.inputs.slice(inputsBefore)).toEqual([`${MEANING_QUERY} restored`]);
      } finally {
        await secondClient.close();
        await second.stop({ keepData: true });
      }
    } finally {
      rmSync(join(backup, '..'), { recursive: true, force: true });
      rmSync(restored, { recursive: true, force: true });
    }
  });

  it('forgets the vector of purged content', async () => {
    const [hit] = await client.call(MemoryPattern.Search, { pool, query: 'puppy Biscuit', limit: 1 });
    expect(hit?.entry.content).toBe('Has a puppy named Biscuit');
    const vectors = (): number => {
      const db = new Database(join(memory.dataDir, 'vectors.db'), { readonly: true });
      try {
        return (
          db
            .prepare<[string], { n: number }>('SELECT count(*) AS n FROM embeddings WHERE content_hash = ?')
            .get(contentHash('Has a puppy named Biscuit'))?.n ?? -1
        );
      } finally {
        db.close();
      }
    };
    expect(vectors()).toBe(1);
    await client.call(MemoryPattern.Purge, { pool, actor: user, id: hit!.entry.id });
    expect(vectors()).toBe(0);
  });
});
