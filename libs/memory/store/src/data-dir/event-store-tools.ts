import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { EncryptionKey } from '@engram/config';
import type { MemoryEvent, NewEvent } from '@engram/domain';
import { DataDir } from './data-dir.js';
import { eventCodecOf } from './data-dir-encryption.js';
import { withDataDirHeld } from './held-data-dir.js';
import { plainEventCodec, sealedEventCodec, type EventCodec } from '../event-log/event-codec.js';
import { EventLog } from '../event-log/event-log.js';
import { PostgresEventStore } from '../event-log/postgres/postgres-event-store.js';

/** Events copied per append (one transaction, one durable write). */
const COPY_BATCH = 1_000;

export interface TableCheck {
  readonly ok: boolean;
  readonly problems: readonly string[];
  /** Rows read (the table's last seq when they are all there). */
  readonly rows: number;
}

/**
 * `engram verify` with ENGRAM_EVENT_STORE: every row of the table read and checked (checksum, gap-free
 * seqs, opens with the key), and the data dir's copy checked to be the table's prefix, event by event.
 */
export async function checkEventStoreTable(
  root: string,
  url: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<TableCheck> {
  const dataDir = new DataDir(root);
  const codec = eventCodecOf(root, options.encryptionKey ?? null);
  let store: PostgresEventStore;
  try {
    store = await PostgresEventStore.open({ url, mirrorDir: dataDir.eventsDir, logger, codec, readOnly: true });
  } catch (error) {
    return { ok: false, problems: [messageOf(error)], rows: 0 };
  }
  const problems: string[] = [];
  let rows = 0;
  try {
    const copy = store.eventsAfter(0)[Symbol.iterator]();
    for await (const event of store.rowsAfter(0)) {
      rows += 1;
      const copied = copy.next();
      if (!copied.done && !isDeepStrictEqual(copied.value, event)) problems.push(`the data dir's copy differs from the table at seq ${event.seq}`);
    }
    if (!copy.next().done) problems.push(`the data dir's copy holds events past the table's last seq ${rows}`);
  } catch (error) {
    problems.push(messageOf(error));
  } finally {
    await store.close();
  }
  return { ok: problems.length === 0, problems, rows };
}

/**
 * Brings the data dir's copy up to the table (before `engram replay` rebuilds the database from it),
 * holding the data dir's lock. Returns the copy's last seq.
 */
export async function copyTableToDataDir(
  root: string,
  url: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<number> {
  const key = options.encryptionKey ?? null;
  return withDataDirHeld(root, key, async (dataDir) => {
    const store = await PostgresEventStore.open({ url, mirrorDir: dataDir.eventsDir, logger, codec: eventCodecOf(root, key) });
    const lastSeq = store.lastSeq;
    await store.close();
    return lastSeq;
  });
}

export interface LogCopyResult {
  readonly events: number;
  readonly lastSeq: number;
}

export interface LogToTableResult extends LogCopyResult {
  /**
   * The log's seqs had gaps (references summed by compaction), closed up in the table: the data dir's
   * log is then not the table's copy, and a replica started on this data dir refuses it.
   */
  readonly renumbered: boolean;
}

/**
 * `engram log copy --to postgres://…`: the data dir's file log into an empty event store table, in
 * order, then read back and compared event by event. A log whose reference sums left gaps in its seqs
 * is renumbered (the table's seqs are gap-free): the events are the same, their positions closed up.
 * The memory service must be stopped (the data dir's lock is held throughout).
 */
export async function copyLogToTable(
  root: string,
  url: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<LogToTableResult> {
  const key = options.encryptionKey ?? null;
  return withDataDirHeld(root, key, async (dataDir) => {
    const scratch = mkdtempSync(join(tmpdir(), 'engram-log-copy-'));
    try {
      const source = await EventLog.open({ dir: dataDir.eventsDir, logger, codec: eventCodecOf(root, key), readOnly: true });
      const target = await PostgresEventStore.open({
        url,
        mirrorDir: join(scratch, 'events'),
        logger,
        codec: key ? sealedEventCodec(key) : plainEventCodec,
      });
      try {
        if (target.lastSeq !== 0) throw new Error(`the event store already holds ${target.lastSeq} events: copy into an empty database`);
        let events = 0;
        for (const batch of batches(source.eventsAfter(0))) {
          await target.append(batch.map(withoutSeq));
          events += batch.length;
        }
        let compared = 0;
        const copied = source.eventsAfter(0)[Symbol.iterator]();
        for await (const row of target.rowsAfter(0)) {
          const original = copied.next();
          if (original.done || !isDeepStrictEqual(withoutSeq(original.value), withoutSeq(row))) {
            throw new Error(`the copy differs from the log at its event ${compared + 1} (seq ${row.seq} in the table)`);
          }
          compared += 1;
        }
        if (compared !== events) throw new Error(`the table holds ${compared} events, the log ${events}`);
        return { events, lastSeq: target.lastSeq, renumbered: target.lastSeq !== source.lastSeq };
      } finally {
        await target.close();
        await source.close();
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
}

/**
 * `engram log copy --to file DIR`: the table into a new file log in DIR (empty or absent), the same
 * seqs and checksummed lines, then read back and compared event by event. With a key, its lines are
 * sealed, as a data dir made with that key seals them.
 */
export async function copyTableToLog(
  url: string,
  dir: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<LogCopyResult> {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: copy into a new folder`);
  const key = options.encryptionKey ?? null;
  const codec: EventCodec = key ? sealedEventCodec(key) : plainEventCodec;
  const scratch = mkdtempSync(join(tmpdir(), 'engram-log-copy-'));
  try {
    const source = await PostgresEventStore.open({ url, mirrorDir: join(scratch, 'events'), logger, codec, readOnly: true });
    const target = await EventLog.open({ dir, logger, codec });
    let events = 0;
    try {
      let batch: MemoryEvent[] = [];
      for await (const event of source.rowsAfter(0)) {
        batch.push(event);
        if (batch.length >= COPY_BATCH) {
          await target.append(batch.map(withoutSeq));
          batch = [];
        }
        events += 1;
      }
      if (batch.length > 0) await target.append(batch.map(withoutSeq));
    } finally {
      await target.close();
    }
    const check = await EventLog.open({ dir, logger, codec, readOnly: true });
    try {
      const written = check.eventsAfter(0)[Symbol.iterator]();
      let compared = 0;
      for await (const row of source.rowsAfter(0)) {
        const line = written.next();
        if (line.done || !isDeepStrictEqual(line.value, row)) throw new Error(`the copy differs from the table at seq ${row.seq}`);
        compared += 1;
      }
      if (!written.next().done || compared !== events) throw new Error(`the copy holds other events than the table's ${events}`);
      return { events, lastSeq: check.lastSeq };
    } finally {
      await check.close();
      await source.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function* batches(events: Iterable<MemoryEvent>): Generator<MemoryEvent[]> {
  let batch: MemoryEvent[] = [];
  for (const event of events) {
    batch.push(event);
    if (batch.length >= COPY_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

function withoutSeq(event: MemoryEvent): NewEvent {
  const { seq: _seq, ...rest } = event;
  return rest as NewEvent;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
