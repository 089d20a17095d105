/**
 * The decay sweep of a 10k-entry pool with 2,500 entries past the threshold, against a real memory
 * process over the TCP RPC, the way the worker's job calls it:
 * - before: the sweep as the worker ran it until issue 21 (every active entry listed over the RPC,
 *   the rule evaluated in the worker, one Archive RPC per decayed entry, each its own durable write
 *   and its own rewrite of the pool's MEMORY.md);
 * - after: `decaySweep` of @engram/worker-handlers (one memory.decay-sweep command per pool: one
 *   decision in the memory service, one batch of archive events).
 * Timed pairs alternate on identical pools; then one more pair runs with strace attached to the
 * memory process to count its durable writes to the log, its fsyncs and its renames of MEMORY.md.
 */
import { join } from 'node:path';
import { type MemoryClient, MemoryPattern } from '@engram/contracts';
import { EVENT_SCHEMA_VERSION, shouldArchive, type MemoryEntry, type NewEvent } from '@engram/domain';
import { decaySweep } from '@engram/worker-handlers';
import { EventLog, plainEventCodec } from '@engram/memory-store';
import { silentLogger, tempDataDir } from '@engram/testing';
import { startRedis } from '../tests/support/redis.js';
import { startMemory } from '../tests/support/stack.js';
import { sentence } from './fixtures.js';
import type { BenchRow } from './run.js';
import { median } from './stats.js';
import { straceAvailable, traceSyscalls } from './support/strace.js';

const SUITE = 'decay';
const POOL_SIZE = 10_000;
/** Every 4th entry is a plain fact (0.95^30 = 0.21 after 30 days: archived); the rest are decisions (0.98^30 = 0.55: kept). */
const DECAYED = POOL_SIZE / 4;
const ROUNDS = 3;
const CREATED = Date.parse('2026-01-01T00:00:00.000Z');
const AS_OF = new Date(CREATED + 30 * 86_400_000).toISOString();
const LIST_LIMIT = 1000;
const context = { jobId: 'bench-decay', enqueuedAt: new Date(AS_OF) };

type Sweep = (client: MemoryClient, pool: string) => Promise<{ archived: number; rpcs: number }>;

/** The worker's sweep of one pool before issue 21: list everything, decide in the worker, archive one by one. */
const sweepBefore: Sweep = async (client, pool) => {
  const entries: MemoryEntry[] = [];
  let rpcs = 0;
  for (let offset = 0; ; offset += LIST_LIMIT) {
    const page = await client.call(MemoryPattern.List, { pool, archived: false, limit: LIST_LIMIT, offset });
    rpcs += 1;
    entries.push(...page);
    if (page.length < LIST_LIMIT) break;
  }
  let archived = 0;
  for (const entry of entries) {
    if (!shouldArchive(entry, new Date(AS_OF))) continue;
    await client.call(MemoryPattern.Archive, { pool, id: entry.id, reason: 'decayed', actor: 'worker:decay', causationId: context.jobId });
    rpcs += 1;
    archived += 1;
  }
  return { archived, rpcs };
};

/** The worker's sweep now: the job's handler itself, with the RPC client as its port. */
const sweepAfter: Sweep = async (client, pool) => {
  let rpcs = 0;
  const counted = { call: ((pattern: never, request: never) => (rpcs++, client.call(pattern, request))) as MemoryClient['call'] };
  const outcome = await decaySweep(counted, { now: () => new Date(AS_OF) }, { pool, asOf: AS_OF }, context);
  return { archived: outcome.archived.length, rpcs };
};

/** Pools of 10k stored entries each, written straight into a log the memory service then starts from. */
async function writePools(dataDir: string, pools: readonly string[]): Promise<void> {
  const log = await EventLog.open({ codec: plainEventCodec, dir: join(dataDir, 'events'), logger: silentLogger() });
  for (const pool of pools) {
    for (let start = 0; start < POOL_SIZE; start += 5_000) {
      const batch: NewEvent[] = [];
      for (let i = start; i < Math.min(POOL_SIZE, start + 5_000); i++) {
        const meta = {
          at: new Date(CREATED + i * 1_000).toISOString(),
          pool,
          actor: 'user',
          causationId: null,
          schemaVersion: EVENT_SCHEMA_VERSION,
        } as const;
        const id = `${pool}-${i}`;
        batch.push({
          ...meta,
          type: 'memory.stored',
          id: `ev-${id}`,
          data: { id, type: 'MEMORY', category: i % 4 === 0 ? 'project' : 'decision', content: sentence(i), confidence: 1, source: 'llm' },
        });
      }
      await log.append(batch);
    }
  }
  await log.close();
}

export async function run(): Promise<BenchRow[]> {
  const counting = straceAvailable();
  const pools = Array.from({ length: ROUNDS }, (_, r) => [`before-${r}`, `after-${r}`]).flat();
  const counted = counting ? ['count-before', 'count-after'] : [];
  const dir = tempDataDir('engram-bench-decay-');
  await writePools(dir.path, [...pools, ...counted]);
  const redis = await startRedis();
  const memory = await startMemory(
    { REDIS_URL: redis.url, CONSOLIDATION_THRESHOLD: '1000000', LOG_LEVEL: 'error' },
    { dataDir: dir.path, timeoutMs: 180_000 },
  );
  const client = memory.client(120_000);
  try {
    const timed = { before: [] as number[], after: [] as number[] };
    const rpcs = { before: 0, after: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [side, sweep] of [
        ['before', sweepBefore],
        ['after', sweepAfter],
      ] as const) {
        const started = performance.now();
        const outcome = await sweep(client, `${side}-${round}`);
        timed[side].push(performance.now() - started);
        if (outcome.archived !== DECAYED) throw new Error(`${side} archived ${outcome.archived}, not ${DECAYED}`);
        rpcs[side] = outcome.rpcs;
      }
    }
    const rows: BenchRow[] = [
      {
        suite: SUITE,
        metric: `sweep of a ${POOL_SIZE / 1000}k-entry pool, ${DECAYED} decayed: before (list + one Archive RPC each), median of ${ROUNDS}`,
        value: median(timed.before),
        unit: 'ms',
        note: `runs ${timed.before.map((ms) => Math.round(ms)).join(' / ')} ms; ${rpcs.before} RPCs`,
      },
      {
        suite: SUITE,
        metric: `the same sweep after (one memory.decay-sweep command), median of ${ROUNDS}`,
        value: median(timed.after),
        unit: 'ms',
        note: `runs ${timed.after.map((ms) => Math.round(ms)).join(' / ')} ms; ${rpcs.after} RPC; ${(median(timed.before) / median(timed.after)).toFixed(0)}x faster`,
      },
    ];
    const pid = memory.process.child.pid;
    if (counting && pid !== undefined) {
      for (const [side, sweep] of [
        ['before', sweepBefore],
        ['after', sweepAfter],
      ] as const) {
        const lines = await traceSyscalls(
          pid,
          ['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2', 'fsync', 'fdatasync', 'rename', 'renameat', 'renameat2'],
          async () => {
            await sweep(client, `count-${side}`);
          },
        );
        const started = (line: string) => !line.includes('resumed>');
        const logWrites = lines.filter((line) => started(line) && /\b(p?writev?2?|pwrite64)\(\d+<[^>]*\/events\/[^>]*\.ndjson>/.test(line)).length;
        const fsyncs = lines.filter((line) => started(line) && /\b(fsync|fdatasync)\(/.test(line)).length;
        const renders = lines.filter((line) => started(line) && /\brename(at2?)?\(.*MEMORY\.md\.tmp-/.test(line)).length;
        rows.push({
          suite: SUITE,
          metric: `${side}: durable writes to the log (O_DSYNC) / fsync calls / MEMORY.md rewrites, one sweep`,
          value: logWrites,
          unit: 'writes',
          note: `${logWrites} / ${fsyncs} / ${renders} (strace on the memory process, a sweep of its own, untimed)`,
        });
      }
    } else {
      rows.push({ suite: SUITE, metric: 'durable writes per sweep', value: Number.NaN, unit: 'writes', note: 'strace not found: not counted' });
    }
    return rows;
  } finally {
    await client.close();
    await memory.stop();
    await redis.stop();
    dir.remove();
  }
}
