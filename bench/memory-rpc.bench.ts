/**
 * Search latency as callers see it: the memory service as a real process, queried over TCP RPC
 * with the same MemoryClient the gateway uses, with 10k and 100k memories in one pool. Same data
 * and queries as the in-process storage suite, so the two show what the transport adds.
 */
import { MemoryPattern } from '@engram/contracts';
import { tempDataDir } from '@engram/testing';
import { startRedis } from '../tests/support/redis.js';
import { startMemory } from '../tests/support/stack.js';
import { query, writeLog } from './fixtures.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';

const SUITE = 'memory-rpc';

async function searchLatencies(size: number): Promise<BenchRow[]> {
  const dir = tempDataDir('engram-bench-rpc-');
  await writeLog(dir.path, size);
  const redis = await startRedis();
  // The service catches its database up from the log at start.
  const memory = await startMemory({ REDIS_URL: redis.url }, { dataDir: dir.path, timeoutMs: 180_000 });
  const client = memory.client(10_000);
  try {
    for (let i = 0; i < 200; i++) await client.call(MemoryPattern.Search, { pool: 'bench', query: query(i), limit: 10 });
    const samples: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      const started = performance.now();
      await client.call(MemoryPattern.Search, { pool: 'bench', query: query(i), limit: 10, recordReference: true });
      samples.push(performance.now() - started);
    }
    const label = `${size / 1000}k`;
    const note = 'over TCP RPC from another process, limit 10, references recorded (as the gateway does)';
    return [
      { suite: SUITE, metric: `search p50 @${label}`, value: percentile(samples, 50), unit: 'ms', note },
      { suite: SUITE, metric: `search p95 @${label}`, value: percentile(samples, 95), unit: 'ms', target: size >= 100_000 ? '<= 15' : '<= 3', note },
    ];
  } finally {
    await client.close();
    await memory.stop();
    await redis.stop();
    dir.remove();
  }
}

export async function run(): Promise<BenchRow[]> {
  return [...(await searchLatencies(10_000)), ...(await searchLatencies(100_000))];
}
