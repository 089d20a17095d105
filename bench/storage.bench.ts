/**
 * The storage core in-process: acknowledged durable writes per second (an ack = the store promise
 * resolved: fsync'd, applied to SQLite, flat files rewritten) at concurrency 1 and 64; search
 * latency with 10k and 100k memories in one pool; replay rate of a 100k-event log; a read of a quiet
 * pool's events in a 12.7k-event log, through the index beside the whole-log scan it replaced; a
 * year of a heavy user's log (5,000 writes, 100,000 searches over 2,000 entries): its bytes against
 * the content it holds and its replay, as written before references were summed, as the service
 * keeps it now (automatic compaction), and after `engram compact`.
 */
import { pino } from 'pino';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { AUTO_COMPACT, compactDataDir, EventLog, openMemoryService, plainEventCodec, replayDataDir } from '@engram/memory-store';
import { tempDataDir } from '@engram/testing';
import { heavyUserYear, query, writeLog } from './fixtures.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';
import { storeConcurrently } from './support/concurrent-stores.js';

const SUITE = 'storage';
const logger = pino({ level: 'silent' });

/** Acknowledged writes per second, the median of `rounds` runs on fresh data dirs, with the CPU (user + system, every thread) per write. */
async function writeRate(concurrency: number, total: number, rounds: number): Promise<BenchRow> {
  const rates: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const dir = tempDataDir('engram-bench-writes-');
    const service = await openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger });
    try {
      const before = process.cpuUsage();
      const seconds = await storeConcurrently(concurrency, total, () => service);
      const used = process.cpuUsage(before);
      rates.push(total / seconds);
      cpu.push((used.user + used.system) / total);
    } finally {
      await service.close();
      dir.remove();
    }
  }
  const range = (values: number[]) => `${Math.round(Math.min(...values))}-${Math.round(Math.max(...values))}`;
  return {
    suite: SUITE,
    metric: `acked writes/s @c=${concurrency}`,
    value: percentile(rates, 50),
    unit: 'writes/s',
    ...(concurrency === 64 ? { target: '>= 10000' } : {}),
    note: `median of ${rounds} (${range(rates)}); CPU per write ${range(cpu)} µs; ${total} stores over 8 pools; ack = fsync'd + SQLite + flat files; load ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  };
}

async function searchLatency(size: number): Promise<BenchRow[]> {
  const dir = tempDataDir('engram-bench-search-');
  try {
    await writeLog(dir.path, size);
    const service = await openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger, clock: () => new Date('2026-03-01T00:00:00.000Z') });
    try {
      for (let i = 0; i < 200; i++) await service.search({ pool: 'bench', query: query(i), limit: 10 });
      const samples: number[] = [];
      for (let i = 0; i < 2_000; i++) {
        const started = performance.now();
        await service.search({ pool: 'bench', query: query(i), limit: 10 });
        samples.push(performance.now() - started);
      }
      const label = `${size / 1000}k`;
      const note = 'in-process, 2-word queries over a 100-word Zipf-like vocabulary, limit 10';
      return [
        { suite: SUITE, metric: `search p50 @${label}`, value: percentile(samples, 50), unit: 'ms', note },
        {
          suite: SUITE,
          metric: `search p95 @${label}`,
          value: percentile(samples, 95),
          unit: 'ms',
          target: size >= 100_000 ? '<= 15' : '<= 3',
          note,
        },
      ];
    } finally {
      await service.close();
    }
  } finally {
    dir.remove();
  }
}

async function replayRate(count: number): Promise<BenchRow> {
  const dir = tempDataDir('engram-bench-replay-');
  try {
    await writeLog(dir.path, count);
    const started = performance.now();
    const result = await replayDataDir(dir.path, logger);
    const seconds = (performance.now() - started) / 1000;
    return {
      suite: SUITE,
      metric: `replay rate @${count / 1000}k events`,
      value: result.eventsApplied / seconds,
      unit: 'events/s',
      target: '>= 10000',
      note: `engram replay: read + apply + verify against evolve + swap; ${result.memoriesRebuilt} memories`,
    };
  } finally {
    dir.remove();
  }
}

/** `GET /engram/pools/emptypool/events?after=0` in-process: the index read beside the old scan of every line. */
export async function quietPoolEventsRead(count: number): Promise<BenchRow[]> {
  const dir = tempDataDir('engram-bench-events-');
  try {
    await writeLog(dir.path, count);
    const service = await openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger });
    const scan = await EventLog.open({ codec: plainEventCodec, dir: join(dir.path, 'events'), logger, readOnly: true });
    try {
      const indexed: number[] = [];
      const scanned: number[] = [];
      for (let round = 0; round < 60; round++) {
        let started = performance.now();
        await service.events({ pool: 'emptypool', after: 0 });
        indexed.push(performance.now() - started);
        started = performance.now();
        scan.read(0, 100, (event) => event.pool === 'emptypool');
        scanned.push(performance.now() - started);
      }
      const note = `${count / 1000}k events in another pool; alternating, 60 rounds; the writer's thread is blocked this long per read`;
      return [
        { suite: SUITE, metric: `quiet pool events read p50 @${count / 1000}k, index`, value: percentile(indexed, 50), unit: 'ms', note },
        { suite: SUITE, metric: `quiet pool events read p50 @${count / 1000}k, log scan (before)`, value: percentile(scanned, 50), unit: 'ms', note },
      ];
    } finally {
      await service.close();
    }
  } finally {
    dir.remove();
  }
}

/** The bytes of content (stored and edited texts) a year's events carry. */
function contentBytes(): number {
  let bytes = 0;
  for (const batch of heavyUserYear()) {
    for (const event of batch) {
      if (event.type === 'memory.stored' || event.type === 'memory.updated') bytes += Buffer.byteLength(event.data.content ?? '');
    }
  }
  return bytes;
}

/**
 * A copy of a data dir's log with every line as the log wrote lines before they were short (the event's
 * own JSON, then its checksum), segment by segment: the same events, seqs and gaps.
 */
async function withLinesAsBefore(from: string): Promise<ReturnType<typeof tempDataDir>> {
  const copy = tempDataDir('engram-bench-year-lines-');
  mkdirSync(join(copy.path, 'events'));
  const events = (await EventLog.open({ codec: plainEventCodec, dir: join(from, 'events'), logger, readOnly: true })).read(0);
  let next = 0;
  for (const name of readdirSync(join(from, 'events'))
    .filter((file) => file.endsWith('.ndjson'))
    .sort()) {
    const count = readFileSync(join(from, 'events', name), 'utf8')
      .split('\n')
      .filter((line) => line !== '').length;
    const lines = events.slice(next, next + count).map((event) => {
      const body = JSON.stringify(event);
      return `${body.slice(0, -1)},"crc":"${crc32(body).toString(16).padStart(8, '0')}"}\n`;
    });
    next += count;
    writeFileSync(join(copy.path, 'events', name), lines.join(''));
  }
  return copy;
}

async function replaySeconds(dir: string): Promise<{ seconds: number; events: number }> {
  const started = performance.now();
  const replayed = await replayDataDir(dir, logger);
  return { seconds: (performance.now() - started) / 1000, events: replayed.eventsApplied };
}

export async function heavyUserYearRows(): Promise<BenchRow[]> {
  const content = contentBytes();
  const rows: BenchRow[] = [];
  const note = `fixtures' heavyUserYear: ${(content / 1e6).toFixed(2)} MB of content; replay = engram replay (read + apply + verify + swap)`;
  const variants = [
    { name: 'as written (before)', autoCompact: false, compactAtEnd: false },
    { name: 'auto-compacted (after)', autoCompact: true, compactAtEnd: false },
    { name: 'after engram compact', autoCompact: true, compactAtEnd: true },
  ];
  for (const variant of variants) {
    const dir = tempDataDir('engram-bench-year-');
    try {
      let compactions = 0;
      const log = await EventLog.open({
        codec: plainEventCodec,
        dir: join(dir.path, 'events'),
        logger,
        ...(variant.autoCompact ? { autoCompact: AUTO_COMPACT, onCompacted: () => (compactions += 1) } : {}),
      });
      const started = performance.now();
      for (const batch of heavyUserYear()) await log.append(batch);
      await log.close();
      const writeSeconds = (performance.now() - started) / 1000;
      if (variant.compactAtEnd) await compactDataDir(dir.path, logger);
      const bytesOf = async (path: string) =>
        (await EventLog.open({ codec: plainEventCodec, dir: join(path, 'events'), logger, readOnly: true })).size.bytes;
      // The same log with its lines as they were written before they were short, replayed first, alternating.
      const before = variant.compactAtEnd ? await withLinesAsBefore(dir.path) : null;
      try {
        const variantRows = async (path: string, name: string) => {
          const bytes = await bytesOf(path);
          const replay = await replaySeconds(path);
          const detail = `${replay.events} events in the log${variant.autoCompact ? `, ${compactions} automatic compactions while writing (${writeSeconds.toFixed(1)} s of appends in batches of 200)` : ''}`;
          return [
            {
              suite: SUITE,
              metric: `heavy-user year: log bytes / content bytes, ${name}`,
              value: bytes / content,
              unit: 'x',
              target: '<= 3',
              note: `${bytes} bytes; ${detail}`,
            },
            { suite: SUITE, metric: `heavy-user year: replay, ${name}`, value: replay.seconds, unit: 's', target: '<= 5', note },
          ];
        };
        if (before) rows.push(...(await variantRows(before.path, `${variant.name}, lines as written before they were short`)));
        rows.push(...(await variantRows(dir.path, variant.name)));
      } finally {
        before?.remove();
      }
    } finally {
      dir.remove();
    }
  }
  return rows;
}

export async function run(): Promise<BenchRow[]> {
  return [
    await writeRate(1, 500, 1),
    await writeRate(64, 20_000, 3),
    ...(await searchLatency(10_000)),
    ...(await searchLatency(100_000)),
    await replayRate(100_000),
    ...(await quietPoolEventsRead(12_700)),
    ...(await heavyUserYearRows()),
  ];
}
