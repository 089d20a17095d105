/**
 * Search latency as callers see it: the memory service as a real process, queried over TCP RPC
 * with the same MemoryClient the gateway uses, with 10k and 100k memories in one pool.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { MemoryClient, MemoryPattern } from '@engram/contracts';
import { openMemoryService } from '@engram/storage';
import { pino } from 'pino';
import { startRedis } from '../tests/support/redis.js';
import { startMemory } from '../tests/support/stack.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';

const WORDS = (
  'build deploy docker redis sqlite postgres node typescript react vite jest vitest lint format prettier eslint ' +
  'pnpm npm yarn turbo nx monorepo gateway memory worker queue cache index search token model prompt stream ' +
  'shell zsh bash fish macos linux windows wsl terminal editor vim emacs vscode cursor warp opencode codex claude ' +
  'prefers concise direct feedback bullet points tests first small commits review branch main release tag'
).split(' ');

function sentence(seed: number): string {
  const words: string[] = [];
  let x = seed * 2654435761;
  for (let i = 0; i < 9; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    words.push(WORDS[x % WORDS.length]!);
  }
  return `Entry ${seed}: ${words.join(' ')}`;
}

async function populate(dataDir: string, count: number): Promise<void> {
  const service = await openMemoryService({ dataDir, tier1MaxChars: 400, logger: pino({ level: 'silent' }) });
  let next = 0;
  const writer = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      await service.store({ pool: 'bench', actor: 'user', content: sentence(index), category: 'project' });
    }
  };
  await Promise.all(Array.from({ length: 64 }, writer));
  await service.close();
}

async function searchLatencies(size: number): Promise<BenchRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), `engram-bench-${size}-`));
  await populate(dataDir, size);
  const redis = await startRedis();
  const memory = await startMemory({ REDIS_URL: redis.url }, { dataDir, timeoutMs: 120_000 });
  const client = new MemoryClient(
    ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port: memory.port } }),
    10_000,
  );
  try {
    const query = (i: number): string => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`;
    for (let i = 0; i < 200; i++) await client.call(MemoryPattern.Search, { pool: 'bench', query: query(i), limit: 5 });
    const samples: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      const started = process.hrtime.bigint();
      await client.call(MemoryPattern.Search, { pool: 'bench', query: query(i), limit: 5, recordReference: true });
      samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const label = size >= 1000 ? `${size / 1000}k` : String(size);
    return [
      { suite: 'memory-rpc', metric: `search p50 @${label}`, value: percentile(samples, 50), unit: 'ms' },
      {
        suite: 'memory-rpc',
        metric: `search p95 @${label}`,
        value: percentile(samples, 95),
        unit: 'ms',
        target: size >= 100_000 ? '<= 15' : '<= 3',
        note: 'over TCP RPC, limit 5, references recorded',
      },
    ];
  } finally {
    await client.close();
    await memory.stop();
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchRow[]> {
  return [...(await searchLatencies(10_000)), ...(await searchLatencies(100_000))];
}
