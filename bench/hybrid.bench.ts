/**
 * Hybrid search at 10k and 100k entries in one pool, with vectors of text-embedding-3-small's size
 * (1,536 float32s), side by side in one run on the same data:
 * - `quantised` (what runs): binary codes of the pool scanned in memory, the best 200 re-ranked by
 *   exact cosine, + BM25 + fusion; in-process and over the TCP RPC from another process;
 * - `exact`: exact cosine over every vector of the pool (the reference), in-process;
 * - lexical search alone, in-process.
 * Vectors are not uniform noise: @engram/testing's ClusteredVectors (a direction every text shares,
 * topics of ~500 texts in subtopics of ~50, noise with an uneven spread over coordinates; unrelated
 * texts at cosine ~0.15, a subtopic's at ~0.5), each text's vector following from its text. Query
 * vectors come from the same mixture, cached after the warm-up as a conversation's repeated queries
 * are, so the rows are the search itself. Agreement: the share of the exact search's top 10 that the
 * quantised search's top 10 holds, for the fused hybrid answer (queries with words that match) and
 * for the vector neighbours alone (queries whose words match nothing).
 */
import { MemoryPattern } from '@engram/contracts';
import type { Embedder } from '@engram/embeddings';
import { vectorToBase64 } from '@engram/embeddings';
import { openMemoryService, type MemoryService } from '@engram/memory-store';
import { ClusteredVectors, silentLogger, tempDataDir } from '@engram/testing';
import { startRedis } from '../tests/support/redis.js';
import { ScriptedEmbeddings } from '../tests/support/scripted-embeddings.js';
import { startMemory } from '../tests/support/stack.js';
import { query, writeLog } from './fixtures.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';

const SUITE = 'hybrid';
const DIMENSIONS = 1_536;
const MODEL = 'bench-clustered-1536';
const logger = silentLogger();
const clock = () => new Date('2026-03-01T00:00:00.000Z');

class ClusteredEmbedder implements Embedder {
  readonly model = MODEL;
  constructor(private readonly vectors: ClusteredVectors) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => this.vectors.vector(text));
  }
}

/** A query whose words match no entry: the answer is the vector neighbours alone. */
const meaningOnly = (i: number): string => `zq${i}x`;

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

type Search = (text: string) => Promise<string[]>;

/**
 * Times each search (after a fifth as many warm up) and keeps its answer, with this process's CPU
 * time per search (user + system; the search's own work when it runs in-process), which a loaded
 * machine stretches far less than wall time.
 */
async function timed(search: Search, texts: readonly string[]): Promise<{ samples: number[]; answers: string[][]; cpuMs: number }> {
  for (const text of texts.slice(0, Math.ceil(texts.length / 5))) await search(text);
  const samples: number[] = [];
  const answers: string[][] = [];
  const cpu = process.cpuUsage();
  for (const text of texts) {
    const started = performance.now();
    answers.push(await search(text));
    samples.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  return { samples, answers, cpuMs: (used.user + used.system) / 1_000 / texts.length };
}

/** Share of the reference's top 10 found in the other's top 10, over all queries. */
function agreement(reference: readonly string[][], other: readonly string[][]): number {
  let found = 0;
  let total = 0;
  reference.forEach((top, i) => {
    total += top.length;
    found += top.filter((id) => other[i]!.includes(id)).length;
  });
  return total === 0 ? 1 : found / total;
}

async function inProcess(dataDir: string, embedder: Embedder | null, scan: 'quantised' | 'exact'): Promise<MemoryService> {
  return openMemoryService({
    dataDir,
    tier1MaxChars: 400,
    logger,
    clock,
    ...(embedder ? { embeddings: { embedder, queryTimeoutMs: 10_000, minSimilarity: 0.3, scan } } : {}),
  });
}

const searchOf =
  (call: (request: { pool: string; query: string; limit: number }) => Promise<readonly { readonly entry: { readonly id: string } }[]>): Search =>
  async (text) =>
    (await call({ pool: 'bench', query: text, limit: 10 })).map((hit) => hit.entry.id);

async function measure(size: number, samples: { quantised: number; exact: number }): Promise<BenchRow[]> {
  const dir = tempDataDir('engram-bench-hybrid-');
  const label = `${size / 1000}k`;
  const vectors = new ClusteredVectors({ dimensions: DIMENSIONS, topics: size / 500, subtopicsPerTopic: 10 });
  const embedder = new ClusteredEmbedder(vectors);
  const withWords = Array.from({ length: samples.quantised }, (_, i) => query(i));
  const withoutWords = Array.from({ length: samples.exact }, (_, i) => meaningOnly(i));
  const compared = withWords.slice(0, samples.exact);
  try {
    await writeLog(dir.path, size);
    let service = await inProcess(dir.path, embedder, 'quantised');
    await fillVectors(service, embedder);
    const search = searchOf((request) => service.search(request));
    const quantised = await timed(search, withWords);
    const quantisedNeighbours = await timed(search, withoutWords);
    await service.close();

    service = await inProcess(dir.path, embedder, 'exact');
    const exact = await timed(search, compared);
    const exactNeighbours = await timed(search, withoutWords);
    await service.close();

    service = await inProcess(dir.path, null, 'quantised');
    const lexical = await timed(search, withWords);
    const lexicalSamples = lexical.samples;
    await service.close();
    const quantisedSamples = quantised.samples;
    const exactSamples = exact.samples;

    const rpcSamples = await overRpc(dir.path, vectors, withWords);

    const note = `${DIMENSIONS}-dim clustered vectors (ClusteredVectors: ${size / 500} topics x 10 subtopics), floor 0.3, limit 10, query vectors cached`;
    const ms = (metric: string, values: number[], p: number, extra: Partial<BenchRow> = {}): BenchRow => ({
      suite: SUITE,
      metric: `${metric} p${p} @${label}`,
      value: percentile(values, p),
      unit: 'ms',
      note: `${note}, ${values.length} searches`,
      ...extra,
    });
    const target = size >= 100_000 ? '<= 60' : '<= 15';
    return [
      ms('hybrid quantised search', quantisedSamples, 50),
      ms('hybrid quantised search', quantisedSamples, 95, { target }),
      ms('hybrid quantised search over RPC', rpcSamples, 50),
      ms('hybrid quantised search over RPC', rpcSamples, 95, { target }),
      ms('hybrid exact search', exactSamples, 50),
      ms('hybrid exact search', exactSamples, 95),
      ms('lexical search', lexicalSamples, 50),
      ms('lexical search', lexicalSamples, 95),
      {
        suite: SUITE,
        metric: `CPU per search in-process, hybrid quantised / exact / lexical @${label}`,
        value: quantised.cpuMs,
        unit: 'ms',
        note: `exact ${exact.cpuMs.toFixed(2)} ms, lexical ${lexical.cpuMs.toFixed(2)} ms (process.cpuUsage over the timed searches)`,
      },
      {
        suite: SUITE,
        metric: `top-10 agreement with exact, hybrid @${label}`,
        value: agreement(exact.answers, quantised.answers.slice(0, compared.length)) * 100,
        unit: '%',
        target: '>= 95',
        note: `${compared.length} queries with words, fused answer`,
      },
      {
        suite: SUITE,
        metric: `top-10 agreement with exact, vector neighbours @${label}`,
        value: agreement(exactNeighbours.answers, quantisedNeighbours.answers) * 100,
        unit: '%',
        note: `${withoutWords.length} queries whose words match nothing`,
      },
    ];
  } finally {
    dir.remove();
  }
}

/** The memory service as a real process on the same data dir, its queries embedded by an endpoint serving the same vectors. */
async function overRpc(dataDir: string, vectors: ClusteredVectors, texts: readonly string[]): Promise<number[]> {
  const endpoint = await ScriptedEmbeddings.start({ vectorOf: (text) => vectors.vector(text) });
  const redis = await startRedis();
  const memory = await startMemory(
    { REDIS_URL: redis.url, EMBEDDINGS_BASE_URL: endpoint.baseUrl, EMBEDDINGS_MODEL: MODEL, EMBEDDINGS_QUERY_TIMEOUT_MS: '10000' },
    { dataDir, timeoutMs: 300_000 },
  );
  const client = memory.client(30_000);
  try {
    return (await timed(searchOf((request) => client.call(MemoryPattern.Search, request)), texts)).samples;
  } finally {
    await client.close();
    await memory.stop({ keepData: true });
    await redis.stop();
    await endpoint.close();
  }
}

export async function run(): Promise<BenchRow[]> {
  return [...(await measure(10_000, { quantised: 500, exact: 100 })), ...(await measure(100_000, { quantised: 300, exact: 20 }))];
}
