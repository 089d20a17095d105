/**
 * In-process embeddings (EMBEDDINGS_MODEL_DIR) with a model of all-MiniLM-L6-v2's exact shape (6
 * layers, hidden 384, 12 heads, intermediate 1536, vocabulary 30,522, 512 positions; random
 * weights written by @engram/testing, so the same work per token as the real model, no download):
 *
 * - the encoder alone: sentences/s by batch size on memory-length sentences, 2 threads (and 1 at the default batch);
 * - a query as the memory service embeds it (one short text through the worker thread) p50/p95;
 * - the real processes: memory and worker started with the model folder, 1,000 entries stored
 *   over the RPC, how fast the worker's jobs embed them (RPC and storage included), its CPU
 *   seconds, hybrid search p50/p95 with queries never seen before (each one embedded), and the
 *   resident memory of both processes beside the same processes without a model.
 *
 * Sentences: "<subject> <verb> <words>" memories of 6 to 30 words over the fixtures' vocabulary;
 * the vocabulary holds each word whole, as BERT's holds common English words, so token counts are
 * close to a real tokenizer's on plain English (technical words split into more pieces there).
 */
import { readFileSync } from 'node:fs';
import { MemoryPattern } from '@engram/contracts';
import { OnnxEmbedder, readModelFolder, SentenceEncoder } from '@engram/embeddings';
import { tempDataDir, writeSentenceEncoder } from '@engram/testing';
import { startRedis } from '../tests/support/redis.js';
import { startMemory, startWorker } from '../tests/support/stack.js';
import { WORDS } from './fixtures.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';

const SUITE = 'embeddings';
/** The worker thread runs compiled code (`npm run bench` builds first). */
const THREAD_SCRIPT = new URL('../libs/shared/embeddings/dist/onnx-thread.js', import.meta.url);
const SUBJECTS = ['The user', 'The team', 'Our CI', 'The staging box', 'Production', 'The gateway', 'My laptop', 'The release'];
const VERBS = ['prefers', 'uses', 'runs', 'deploys with', 'avoids', 'switched to', 'depends on', 'is moving to'];

/** A deterministic memory-like sentence of 6-30 words (lengths skewed short, as stored facts are). */
export function memorySentence(seed: number): string {
  let x = (seed + 7) * 2654435761;
  const next = (): number => {
    x = (x * 1103515245 + 12345) >>> 0;
    return x / 2 ** 32;
  };
  const length = 4 + Math.floor(next() ** 1.5 * 24);
  const words = Array.from({ length }, () => WORDS[Math.floor(next() ** 2 * WORDS.length)] ?? 'memory');
  return `${SUBJECTS[seed % SUBJECTS.length]} ${VERBS[(seed >> 3) % VERBS.length]} ${words.join(' ')}.`;
}

/** Resident and peak resident memory of a process, MiB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** CPU seconds (user + system) a process has used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function encoderRows(dir: string, sentences: readonly string[]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  // Batch 1 is a search's query; 8 the encoder's default run; 64 one embedding job's request (EMBED_BATCH).
  const configs = [...[1, 4, 8, 16, 32, 64].map((batch) => ({ threads: 2, batch })), { threads: 1, batch: 8 }];
  for (const { threads, batch } of configs) {
    const encoder = await SentenceEncoder.open(dir, { threads, maxBatch: batch });
    try {
      await encoder.encode(sentences.slice(0, 64));
      const started = performance.now();
      await encoder.encode(sentences);
      const seconds = (performance.now() - started) / 1000;
      rows.push({
        suite: SUITE,
        metric: `encoder sentences/s, batch ${batch}, ${threads} thread${threads > 1 ? 's' : ''}`,
        value: sentences.length / seconds,
        unit: 'sentences/s',
        note: `${sentences.length} memory-length sentences, in-process, sorted by length into runs`,
      });
    } finally {
      await encoder.close();
    }
  }
  return rows;
}

async function queryRows(dir: string): Promise<BenchRow[]> {
  const embedder = await OnnxEmbedder.open(dir, { script: THREAD_SCRIPT });
  try {
    const queries = Array.from({ length: 300 }, (_, i) => `${WORDS[(i * 13) % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} setup`);
    for (const query of queries.slice(0, 30)) await embedder.embed([query]);
    const samples: number[] = [];
    for (const query of queries) {
      const started = performance.now();
      await embedder.embed([query]);
      samples.push(performance.now() - started);
    }
    const note = 'one 3-word query through the worker thread (as the memory service embeds a search), 2 threads';
    return [
      { suite: SUITE, metric: 'query embedding p50', value: percentile(samples, 50), unit: 'ms', note },
      { suite: SUITE, metric: 'query embedding p95', value: percentile(samples, 95), unit: 'ms', note },
    ];
  } finally {
    await embedder.close();
  }
}

async function stackRows(dir: string, sentences: readonly string[]): Promise<BenchRow[]> {
  const model = (await readModelFolder(dir)).key;
  const redis = await startRedis();
  const rows: BenchRow[] = [];
  try {
    // Without a model first: what the same two processes hold when searching by words alone.
    const lexicalMemory = await startMemory({ REDIS_URL: redis.url });
    const lexicalWorker = await startWorker({ REDIS_URL: redis.url, ...lexicalMemory.clientEnv, CONSOLIDATION_MODEL: 'off' });
    const lexicalClient = lexicalMemory.client(10_000);
    let baseline: { memory: number; worker: number };
    try {
      for (const content of sentences) await lexicalClient.call(MemoryPattern.Store, { pool: 'bench', actor: 'user', content });
      for (let i = 0; i < 100; i++) await lexicalClient.call(MemoryPattern.Search, { pool: 'bench', query: memorySentence(10_000 + i), limit: 10 });
      baseline = { memory: memoryOf(lexicalMemory.process.child.pid!).rss, worker: memoryOf(lexicalWorker.process.child.pid!).rss };
    } finally {
      await lexicalClient.close();
      await lexicalWorker.stop();
      await lexicalMemory.stop();
    }

    const env = { REDIS_URL: redis.url, EMBEDDINGS_MODEL_DIR: dir, EMBEDDINGS_QUERY_TIMEOUT_MS: '5000' };
    const memory = await startMemory(env, { timeoutMs: 60_000 });
    const worker = await startWorker({ ...env, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off' }, { timeoutMs: 60_000 });
    const client = memory.client(30_000);
    try {
      const memoryPid = memory.process.child.pid!;
      const workerPid = worker.process.child.pid!;
      const loaded = { memory: memoryOf(memoryPid).rss, worker: memoryOf(workerPid).rss };
      const cpuBefore = cpuSeconds(workerPid);
      const started = performance.now();
      for (const content of sentences) await client.call(MemoryPattern.Store, { pool: 'bench', actor: 'user', content });
      for (;;) {
        const missing = await client.call(MemoryPattern.VectorsMissing, { pool: 'bench', model, limit: 1 });
        if (missing.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuSeconds(workerPid) - cpuBefore;

      const samples: number[] = [];
      for (let i = 0; i < 200; i++) {
        const started = performance.now();
        await client.call(MemoryPattern.Search, { pool: 'bench', query: memorySentence(20_000 + i), limit: 10 });
        samples.push(performance.now() - started);
      }
      const after = { memory: memoryOf(memoryPid), worker: memoryOf(workerPid) };
      const note = `${sentences.length} entries stored over the RPC, default threads (one per core)`;
      rows.push(
        {
          suite: SUITE,
          metric: 'worker: entries embedded/s (jobs, RPC and storage included)',
          value: sentences.length / seconds,
          unit: 'entries/s',
          note,
        },
        { suite: SUITE, metric: 'worker: CPU seconds per 1,000 entries', value: (cpu / sentences.length) * 1000, unit: 's', note },
        {
          suite: SUITE,
          metric: 'hybrid search p50 / p95, each query new (embedded in memory)',
          value: percentile(samples, 50),
          unit: 'ms',
          note: `p95 ${percentile(samples, 95).toFixed(1)} ms; over the RPC, ${sentences.length} entries, limit 10`,
        },
        {
          suite: SUITE,
          metric: 'memory service RSS: lexical / model loaded / after embedding and searches (peak)',
          value: after.memory.rss,
          unit: 'MiB',
          note: `${baseline.memory.toFixed(0)} / ${loaded.memory.toFixed(0)} / ${after.memory.rss.toFixed(0)} (${after.memory.peak.toFixed(0)})`,
        },
        {
          suite: SUITE,
          metric: 'worker RSS: lexical / model loaded / after embedding (peak)',
          value: after.worker.rss,
          unit: 'MiB',
          note: `${baseline.worker.toFixed(0)} / ${loaded.worker.toFixed(0)} / ${after.worker.rss.toFixed(0)} (${after.worker.peak.toFixed(0)})`,
        },
      );
    } finally {
      await client.close();
      await worker.stop();
      await memory.stop();
    }
  } finally {
    await redis.stop();
  }
  return rows;
}

export async function run(): Promise<BenchRow[]> {
  const dir = tempDataDir('engram-bench-minilm-');
  try {
    writeSentenceEncoder(dir.path, { shape: 'minilm-l6', words: WORDS, maxSeqLength: 256 });
    const sentences = Array.from({ length: 1_000 }, (_, i) => memorySentence(i));
    const encoder = await SentenceEncoder.open(dir.path);
    const tokens = sentences.map((sentence) => encoder.tokenize(sentence).ids.length);
    await encoder.close();
    const rows: BenchRow[] = [
      {
        suite: SUITE,
        metric: 'tokens per sentence, mean / p95 ([CLS] and [SEP] included)',
        value: tokens.reduce((a, b) => a + b, 0) / tokens.length,
        unit: 'tokens',
        note: `p95 ${percentile(tokens, 95)}; MiniLM-L6 shape, random weights`,
      },
    ];
    rows.push(...(await encoderRows(dir.path, sentences.slice(0, 256))));
    rows.push(...(await queryRows(dir.path)));
    rows.push(...(await stackRows(dir.path, sentences)));
    return rows;
  } finally {
    dir.remove();
  }
}
