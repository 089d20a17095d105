/**
 * Hybrid search in-process at 10k and 100k entries in one pool, with vectors of
 * text-embedding-3-small's size (1,536 float32s): the sqlite-vec brute-force cosine scan over the
 * pool plus BM25 and the fusion, beside lexical search on the same data in the same run. Query
 * vectors come from an in-process embedder and are cached after the warm-up, as a conversation's
 * repeated queries are, so the rows are the search itself; a query not seen before adds the
 * endpoint's latency, at most EMBEDDINGS_QUERY_TIMEOUT_MS.
 */
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import type { Embedder } from '@engram/embeddings';
import { vectorToBase64 } from '@engram/embeddings';
import { openMemoryService, type MemoryService } from '@engram/storage';
import { tempDataDir } from '@engram/testing';
import { query, writeLog } from './fixtures.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';

const SUITE = 'hybrid';
const DIMENSIONS = 1_536;
const logger = pino({ level: 'silent' });

/** A deterministic pseudo-random unit vector per text (what is measured is the scan, not meaning). */
class InProcessEmbedder implements Embedder {
  readonly model = 'bench-1536';
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const vector = new Float32Array(DIMENSIONS);
      let x = createHash('sha256').update(text).digest().readUInt32LE(0) || 1;
      let norm = 0;
      for (let i = 0; i < DIMENSIONS; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        vector[i] = x / 2 ** 32 - 0.5;
        norm += vector[i]! ** 2;
      }
      return vector.map((value) => value / Math.sqrt(norm));
    });
  }
}

async function fillVectors(service: MemoryService, embedder: Embedder): Promise<void> {
  const vectors = service.vectors;
  if (!vectors) throw new Error('hybrid search is off');
  for (;;) {
    const missing = await vectors.missing({ pool: 'bench', model: embedder.model, limit: 2_048 });
    if (missing.length === 0) return;
    const made = await embedder.embed(missing.map((text) => text.content));
    await vectors.storeVectors({ model: embedder.model, vectors: missing.map((text, i) => ({ hash: text.hash, vector: vectorToBase64(made[i]!) })) });
  }
}

async function latency(service: MemoryService, count: number): Promise<number[]> {
  for (let i = 0; i < count / 5; i++) await service.search({ pool: 'bench', query: query(i), limit: 10 });
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await service.search({ pool: 'bench', query: query(i), limit: 10 });
    samples.push(performance.now() - started);
  }
  return samples;
}

/** `samples`: searches measured (a fifth as many warm up first); fewer at 100k, where one hybrid search scans ~600 MB of vectors. */
async function searchLatency(size: number, samples: number): Promise<BenchRow[]> {
  const dir = tempDataDir('engram-bench-hybrid-');
  const label = `${size / 1000}k`;
  const clock = () => new Date('2026-03-01T00:00:00.000Z');
  try {
    await writeLog(dir.path, size);
    const embedder = new InProcessEmbedder();
    const hybrid = await openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger, clock, embeddings: { embedder, queryTimeoutMs: 1_000 } });
    let hybridSamples: number[];
    let missingMs: number;
    try {
      await fillVectors(hybrid, embedder);
      // What each embedding job costs the memory service first: finding the pool's texts without a vector.
      const started = performance.now();
      await hybrid.vectors?.missing({ pool: 'bench', model: embedder.model, limit: 64 });
      missingMs = performance.now() - started;
      hybridSamples = await latency(hybrid, samples);
    } finally {
      await hybrid.close();
    }
    const lexical = await openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger, clock });
    let lexicalSamples: number[];
    try {
      lexicalSamples = await latency(lexical, samples);
    } finally {
      await lexical.close();
    }
    const note = `in-process, ${DIMENSIONS}-dim vectors, query vectors cached, limit 10, ${samples} searches; lexical on the same data in the same run`;
    return [
      { suite: SUITE, metric: `hybrid search p50 @${label}`, value: percentile(hybridSamples, 50), unit: 'ms', note },
      { suite: SUITE, metric: `hybrid search p95 @${label}`, value: percentile(hybridSamples, 95), unit: 'ms', note },
      { suite: SUITE, metric: `lexical search p50 @${label}`, value: percentile(lexicalSamples, 50), unit: 'ms', note },
      { suite: SUITE, metric: `lexical search p95 @${label}`, value: percentile(lexicalSamples, 95), unit: 'ms', note },
      {
        suite: SUITE,
        metric: `texts-without-vector lookup @${label}`,
        value: missingMs,
        unit: 'ms',
        note: "one embedding job's first RPC, every entry already embedded",
      },
    ];
  } finally {
    dir.remove();
  }
}

export async function run(): Promise<BenchRow[]> {
  return [...(await searchLatency(10_000, 500)), ...(await searchLatency(100_000, 100))];
}
