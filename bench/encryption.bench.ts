/**
 * What encryption at rest costs (#23), plaintext and encrypted side by side in one run, each figure
 * measured in alternating rounds so both see the same machine: acknowledged writes/s at concurrency 1
 * and 64 (an ack = the event fsync'd, SQLite, the flat files: sealed events, encrypted pages and
 * sealed flat files when encrypted), search p50/p95 with 10k and 100k memories in one pool (the
 * services open at once, queried in alternating blocks), `engram replay` of a 100k-event log, and
 * the start of the memory service on a 100k-event data dir whose database is caught up (the scan of
 * the log, opening the database, rendering the flat files). Ratios are encrypted / plaintext for
 * times and plaintext / encrypted for rates: above 1 is what encryption costs.
 *
 * Encrypted data dirs get the current page cipher (AEGIS-256). With ENGRAM_BENCH_OLD_CIPHER=1 a third
 * column runs a data dir on the cipher of before (SQLCipher 4, recorded in its encryption.json as such
 * data dirs have it), to show the two side by side.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { EncryptionKey } from '@engram/config';
import { openMemoryService, replayDataDir, sealedEventCodec, type MemoryService } from '@engram/memory-store';
import { tempDataDir } from '@engram/testing';
import { query, sentence, writeLog } from './fixtures.js';
import type { BenchRow } from './run.js';
import { median, percentile } from './stats.js';

const SUITE = 'encryption';
const logger = pino({ level: 'silent' });
const key = EncryptionKey.parse(EncryptionKey.generate());
interface Mode {
  readonly name: string;
  readonly key: EncryptionKey | null;
  /** The data dir's page cipher, written in its encryption.json before the first start; absent: the current one. */
  readonly pages?: string;
}
const MODES: readonly Mode[] = [
  { name: 'plaintext', key: null },
  ...(process.env['ENGRAM_BENCH_OLD_CIPHER'] === '1' ? [{ name: 'encrypted, SQLCipher 4 (before)', key, pages: 'sqlcipher-4' }] : []),
  { name: 'encrypted', key },
];
type Samples = Record<string, number[]>;
const samples = (): Samples => Object.fromEntries(MODES.map((mode) => [mode.name, []]));

const open = (dataDir: string, mode: Mode): Promise<MemoryService> =>
  openMemoryService({ dataDir, tier1MaxChars: 400, logger, encryptionKey: mode.key, clock: () => new Date('2026-03-01T00:00:00.000Z') });

/** A new data dir for `mode`: one encrypted with the cipher of before has that marker from the start, as such data dirs do. */
function newDataDir(prefix: string, mode: Mode): ReturnType<typeof tempDataDir> {
  const dir = tempDataDir(prefix);
  if (mode.key && mode.pages) {
    const marker = { format: 1, keyId: mode.key.id, databases: mode.pages, events: 'sealed-aes-256-gcm' };
    writeFileSync(join(dir.path, 'encryption.json'), `${JSON.stringify(marker, null, 2)}\n`);
  }
  return dir;
}

/** A data dir of `count` events (90% stores) with its database caught up, encrypted or not. */
async function dataDirOf(count: number, mode: Mode): Promise<ReturnType<typeof tempDataDir>> {
  const dir = newDataDir(`engram-bench-${mode.key ? 'encrypted' : 'plaintext'}-`, mode);
  // The first start marks an encrypted data dir (encryption.json) before any event is written.
  await (await open(dir.path, mode)).close();
  await writeLog(dir.path, count, mode.key ? sealedEventCodec(mode.key) : undefined);
  await (await open(dir.path, mode)).close();
  return dir;
}

/** Rows for one figure: each mode's median over the rounds, and each encrypted mode's ratio to plaintext. */
function rows(metric: string, unit: string, values: Samples, higherIsBetter: boolean, note: string): BenchRow[] {
  const plain = median(values['plaintext']!);
  return [
    ...MODES.map((mode) => ({ suite: SUITE, metric: `${metric}, ${mode.name}`, value: median(values[mode.name]!), unit, note })),
    ...MODES.filter((mode) => mode.key).map((mode) => {
      const sealed = median(values[mode.name]!);
      return {
        suite: SUITE,
        metric: `${metric}, cost of ${mode.name}`,
        value: higherIsBetter ? plain / sealed : sealed / plain,
        unit: 'x',
        target: '<= 1.3',
        note: `${values['plaintext']!.length} alternating rounds each`,
      };
    }),
  ];
}

/** CPU time of this process (every thread: the WAL checkpointer's too) since `from`, in microseconds. */
const cpuSince = (from: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(from);
  return used.user + used.system;
};

async function writeRate(concurrency: number, total: number, rounds: number): Promise<BenchRow[]> {
  const values = samples();
  const cpu = samples();
  for (let round = 0; round < rounds; round++) {
    for (const mode of MODES) {
      const dir = newDataDir('engram-bench-writes-', mode);
      const service = await open(dir.path, mode);
      try {
        let next = 0;
        const started = performance.now();
        const cpuStart = process.cpuUsage();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < total) {
              const index = next++;
              await service.store({ pool: `bench-${index % 8}`, actor: 'user', content: sentence(index), category: 'project' });
            }
          }),
        );
        values[mode.name]!.push(total / ((performance.now() - started) / 1000));
        cpu[mode.name]!.push(cpuSince(cpuStart) / total);
      } finally {
        await service.close();
        dir.remove();
      }
    }
  }
  const note = `${total} stores over 8 pools; ack = fsync'd + SQLite + flat files`;
  return [
    ...rows(`acked writes/s @c=${concurrency}`, 'writes/s', values, true, note),
    ...rows(`CPU per acked write @c=${concurrency}`, 'µs', cpu, false, `${note}; user + system, all threads`),
  ];
}

async function searchLatency(size: number): Promise<BenchRow[]> {
  const dirs = await Promise.all(MODES.map((mode) => dataDirOf(size, mode)));
  const services = await Promise.all(MODES.map((mode, index) => open(dirs[index]!.path, mode)));
  try {
    const latencies = samples();
    for (const service of services) for (let i = 0; i < 200; i++) await service.search({ pool: 'bench', query: query(i), limit: 10 });
    for (let block = 0; block < 20; block++) {
      for (const [index, mode] of MODES.entries()) {
        for (let i = block * 100; i < (block + 1) * 100; i++) {
          const started = performance.now();
          await services[index]!.search({ pool: 'bench', query: query(i), limit: 10 });
          latencies[mode.name]!.push(performance.now() - started);
        }
      }
    }
    const label = `${size / 1000}k`;
    const note = 'in-process, 2,000 2-word queries each, in alternating blocks of 100, limit 10';
    const at = (p: number): Samples => Object.fromEntries(MODES.map((mode) => [mode.name, [percentile(latencies[mode.name]!, p)]]));
    return [...rows(`search p50 @${label}`, 'ms', at(50), false, note), ...rows(`search p95 @${label}`, 'ms', at(95), false, note)];
  } finally {
    for (const service of services) await service.close();
    for (const dir of dirs) dir.remove();
  }
}

async function replayAndStart(count: number, rounds: number): Promise<BenchRow[]> {
  const dirs = await Promise.all(MODES.map((mode) => dataDirOf(count, mode)));
  try {
    const replay = samples();
    const start = samples();
    const startCpu = samples();
    let memories = 0;
    for (let round = 0; round < rounds; round++) {
      for (const [index, mode] of MODES.entries()) {
        const started = performance.now();
        const result = await replayDataDir(dirs[index]!.path, logger, { encryptionKey: mode.key });
        replay[mode.name]!.push(result.eventsApplied / ((performance.now() - started) / 1000));
        memories = result.memoriesRebuilt;
      }
      for (const [index, mode] of MODES.entries()) {
        const started = performance.now();
        const cpuStart = process.cpuUsage();
        const service = await open(dirs[index]!.path, mode);
        start[mode.name]!.push(performance.now() - started);
        startCpu[mode.name]!.push(cpuSince(cpuStart) / 1000);
        await service.close();
      }
    }
    const label = `${count / 1000}k events`;
    return [
      ...rows(`replay rate @${label}`, 'events/s', replay, true, `engram replay: read + apply + verify + swap; ${memories} memories`),
      ...rows(`memory service start @${label}`, 'ms', start, false, 'open to ready: lock, log scan, database check, flat files; database caught up'),
      ...rows(`CPU of a memory service start @${label}`, 'ms', startCpu, false, 'user + system, all threads'),
    ];
  } finally {
    for (const dir of dirs) dir.remove();
  }
}

export async function run(): Promise<BenchRow[]> {
  return [
    ...(await writeRate(1, 500, 3)),
    ...(await writeRate(64, 10_000, 3)),
    ...(await searchLatency(10_000)),
    ...(await searchLatency(100_000)),
    ...(await replayAndStart(100_000, 3)),
  ];
}
