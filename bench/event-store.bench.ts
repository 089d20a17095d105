/**
 * The event log on PostgreSQL (#22) beside the file log, in one run: acknowledged writes per second at
 * concurrency 1 and 64, search p95 at 10k memories and replay events/s, for the data dir's file log,
 * one memory replica on PostgreSQL, and two replicas on the same table (the writes spread over both,
 * in one process). Rounds alternate the three, each figure is the median of its rounds, and the
 * ratio to the file log is given beside it. Every replica writes to its own data dir on the same disk
 * as the server's WAL (127.0.0.1:5432, or a container where a Docker engine answers).
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { copyLogToTable, copyTableToDataDir, openMemoryService, replayDataDir, type MemoryService } from '@engram/memory-store';
import { startPostgres, tempDataDir, type TestDatabase, type TestPostgres } from '@engram/testing';
import { query, writeLog } from './fixtures.js';
import type { BenchRow } from './run.js';
import { median, percentile } from './stats.js';
import { storeConcurrently } from './support/concurrent-stores.js';

const SUITE = 'event-store';
const logger = pino({ level: 'silent' });
const ROUNDS = 3;
type Mode = 'file log' | 'PostgreSQL, 1 replica' | 'PostgreSQL, 2 replicas';
const MODES: readonly Mode[] = ['file log', 'PostgreSQL, 1 replica', 'PostgreSQL, 2 replicas'];

/** The services of a mode on fresh data dirs (and a fresh database), and how to tear them down. */
async function start(mode: Mode, server: TestPostgres, prepare?: (dataDir: string, database: TestDatabase | null) => Promise<void>) {
  const dir = tempDataDir('engram-bench-store-');
  const database = mode === 'file log' ? null : await server.database();
  await prepare?.(join(dir.path, 'a'), database);
  const names = mode === 'PostgreSQL, 2 replicas' ? ['a', 'b'] : ['a'];
  const services: MemoryService[] = [];
  for (const name of names) {
    services.push(
      await openMemoryService({
        dataDir: join(dir.path, name),
        tier1MaxChars: 400,
        logger,
        clock: () => new Date('2026-03-01T00:00:00.000Z'),
        ...(database ? { eventStore: { url: database.url } } : {}),
      }),
    );
  }
  return {
    services,
    stop: async () => {
      for (const service of services) await service.close();
      await database?.drop();
      dir.remove();
    },
  };
}

async function writeRate(mode: Mode, server: TestPostgres, concurrency: number, total: number): Promise<number> {
  const { services, stop } = await start(mode, server);
  try {
    // A pool's writes go to one replica, as MEMORY_HOSTS routes them (the other takes them on failover).
    return total / (await storeConcurrently(concurrency, total, (index) => services[(index % 8) % services.length]!));
  } finally {
    await stop();
  }
}

async function searchP95(mode: Mode, server: TestPostgres, size: number): Promise<number> {
  const { services, stop } = await start(mode, server, async (dataDir, database) => {
    await writeLog(dataDir, size);
    // On PostgreSQL the same log is the table's: replica a's data dir holds its copy already, b builds its own.
    if (database) await copyLogToTable(dataDir, database.url, logger);
  });
  try {
    for (let i = 0; i < 200; i++) await services[i % services.length]!.search({ pool: 'bench', query: query(i), limit: 10 });
    const samples: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      const started = performance.now();
      await services[i % services.length]!.search({ pool: 'bench', query: query(i), limit: 10 });
      samples.push(performance.now() - started);
    }
    return percentile(samples, 95);
  } finally {
    await stop();
  }
}

/** `engram replay` of a `size`-event log: the file log's, or a new replica's copy of the table then its database (two at once for two replicas). */
async function replayRate(mode: Mode, server: TestPostgres, size: number): Promise<number> {
  const dir = tempDataDir('engram-bench-store-replay-');
  const database = mode === 'file log' ? null : await server.database();
  try {
    const home = join(dir.path, 'home');
    await writeLog(home, size);
    if (!database) {
      const started = performance.now();
      const result = await replayDataDir(home, logger);
      return result.eventsApplied / ((performance.now() - started) / 1000);
    }
    await copyLogToTable(home, database.url, logger);
    const replicas = mode === 'PostgreSQL, 2 replicas' ? ['a', 'b'] : ['a'];
    const started = performance.now();
    const applied = await Promise.all(
      replicas.map(async (name) => {
        const root = join(dir.path, name);
        await copyTableToDataDir(root, database.url, logger);
        return (await replayDataDir(root, logger)).eventsApplied;
      }),
    );
    return applied.reduce((sum, count) => sum + count, 0) / ((performance.now() - started) / 1000);
  } finally {
    await database?.drop();
    dir.remove();
  }
}

async function sideBySide(
  metric: string,
  unit: string,
  measure: (mode: Mode) => Promise<number>,
  note: string,
  higherIsBetter = true,
): Promise<BenchRow[]> {
  const samples = new Map<Mode, number[]>(MODES.map((mode) => [mode, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of MODES) samples.get(mode)!.push(await measure(mode));
  }
  const file = median(samples.get('file log')!);
  return MODES.map((mode) => {
    const value = median(samples.get(mode)!);
    const ratio = value / file;
    return {
      suite: SUITE,
      metric: `${metric}, ${mode}`,
      value,
      unit,
      ...(mode === 'PostgreSQL, 1 replica' && metric.includes('c=64') ? { target: '>= 0.5x file log' } : {}),
      note: `${note}; median of ${ROUNDS} alternating rounds; ${ratio.toFixed(2)}x the file log${higherIsBetter ? '' : ' (lower is better)'}`,
    };
  });
}

export async function run(): Promise<BenchRow[]> {
  const server = await startPostgres();
  try {
    return [
      ...(await sideBySide(
        'acked writes/s @c=1',
        'writes/s',
        (mode) => writeRate(mode, server, 1, 300),
        '300 stores over 8 pools, one at a time (2 replicas: 4 pools each)',
      )),
      ...(await sideBySide(
        'acked writes/s @c=64',
        'writes/s',
        (mode) => writeRate(mode, server, 64, 4_000),
        '4,000 stores over 8 pools, 64 in flight (2 replicas: 4 pools each, as MEMORY_HOSTS routes them); ack = durable (fsync / PostgreSQL commit) + SQLite + flat files',
      )),
      ...(await sideBySide(
        'search p95 @10k',
        'ms',
        (mode) => searchP95(mode, server, 10_000),
        'in-process, 2,000 searches (alternating replicas)',
        false,
      )),
      ...(await sideBySide(
        'replay @20k events',
        'events/s',
        (mode) => replayRate(mode, server, 20_000),
        'engram replay; on PostgreSQL a new replica: copy the table into its data dir, then build and verify the database (2 replicas: both at once, events summed)',
      )),
    ];
  } finally {
    await server.stop();
  }
}
