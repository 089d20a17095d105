import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { EncryptionKey } from '@engram/config';
import { replayEvents, type MemoryEvent } from '@engram/domain';
import { DataDir } from './data-dir.js';
import { databaseKeyOf, eventCodecOf } from './data-dir-encryption.js';
import { withDataDirHeld } from './held-data-dir.js';
import { foldWal } from '../database/database.js';
import type { AtRestKey } from '../database/page-cipher.js';
import { compareEntries } from './entry-equality.js';
import { EventLog } from '../event-log/event-log.js';
import { fsyncPath } from '../event-log/fsync.js';
import { catchUp } from './open-memory-service.js';
import { Projection } from '../projection/projection.js';
import { vectorCoverage, type VectorCoverage } from '../vectors/vector-store.js';

/** The log as a replay reads it. */
export interface EventSource {
  readonly lastSeq: number;
  eventsAfter(seq: number): Iterable<MemoryEvent>;
}

export interface ReplayResult {
  readonly eventsApplied: number;
  readonly memoriesRebuilt: number;
  readonly lastSeq: number;
  readonly databasePath: string;
}

export interface VerifyResult {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly lastSeq: number;
  readonly memories: number;
  /**
   * With hybrid search configured: active entries without a vector of the model. Not a problem (the
   * worker embeds them while the memory service runs; search finds them by words meanwhile), a report.
   */
  readonly vectors?: VectorCoverage;
}

/**
 * `engram replay`: builds a new database from the log in a temp file, verifies it against the pure
 * fold of the log, then swaps it in with one rename. Holds the data-dir lock throughout.
 */
export async function replayDataDir(
  root: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<ReplayResult> {
  const key = options.encryptionKey ?? null;
  return withDataDirHeld(root, key, async (dataDir) => {
    const log = await EventLog.open({ dir: dataDir.eventsDir, logger, codec: eventCodecOf(root, key) });
    const temp = `${dataDir.databasePath}.replay-tmp`;
    removeDatabaseFiles(temp);
    // A temp file that is verified and fsync'd before the swap need not be synced on every commit.
    const projection = Projection.open(temp, { bulk: true, key: databaseKeyOf(root, key) });
    let eventsApplied: number;
    let memoriesRebuilt: number;
    try {
      // Decoded once, used twice: to build the database and as the oracle it is checked against.
      const events = [...log.eventsAfter(0)];
      const source = { lastSeq: log.lastSeq, eventsAfter: (seq: number) => events.filter((event) => event.seq > seq) };
      eventsApplied = catchUp(projection, source, logger);
      const problems = compareWithLog(projection, source);
      if (problems.length > 0) throw new Error(`the rebuilt database does not match the log: ${problems.join('; ')}`);
      projection.fullText.check();
      memoriesRebuilt = projection.queries.count();
    } finally {
      projection.close();
      await log.close();
    }
    // Whatever closing left next to the temp file belongs to it, not to the database swapped in.
    for (const suffix of ['-wal', '-shm']) rmSync(temp + suffix, { force: true });
    fsyncPath(temp);
    swapIn(temp, dataDir.databasePath, databaseKeyOf(root, key));
    logger.info({ eventsApplied, memoriesRebuilt }, 'replaced the database with one rebuilt from the event log');
    return { eventsApplied, memoriesRebuilt, lastSeq: log.lastSeq, databasePath: dataDir.databasePath };
  });
}

export interface CompactResult {
  /** Events the log no longer holds (references summed into later events), and the events that sum them. */
  readonly removed: number;
  readonly summaries: number;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
}

/**
 * `engram compact`: sums the references of the whole log (EventLog.compact: the active segment is
 * sealed first), and brings the database's event index along. Holds the data-dir lock throughout.
 */
export async function compactDataDir(
  root: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<CompactResult> {
  const key = options.encryptionKey ?? null;
  const { eventsDir } = new DataDir(root);
  if (!existsSync(eventsDir)) throw new Error(`no event log at ${eventsDir}`);
  return withDataDirHeld(root, key, async (dataDir) => {
    const log = await EventLog.open({ dir: dataDir.eventsDir, logger, codec: eventCodecOf(root, key) });
    const bytesBefore = log.size.bytes;
    let compaction;
    try {
      compaction = await log.compact();
    } finally {
      await log.close();
    }
    if (compaction && existsSync(dataDir.databasePath)) {
      const projection = Projection.open(dataDir.databasePath, { key: databaseKeyOf(root, key) });
      try {
        projection.eventIndex.noteCompaction(compaction.removed, compaction.summaries);
      } finally {
        projection.close();
      }
    }
    return {
      removed: compaction?.removed.length ?? 0,
      summaries: compaction?.summaries.length ?? 0,
      bytesBefore,
      bytesAfter: compaction?.bytesAfter ?? bytesBefore,
    };
  });
}

/**
 * `engram verify`: log checksums, database integrity, and database == replay(log); with
 * `embeddingsModel` (hybrid search on), how many active entries have no vector of it.
 */
export async function verifyDataDir(
  root: string,
  logger: Logger,
  options: { readonly embeddingsModel?: string; readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<VerifyResult> {
  if (!existsSync(root)) return { ok: false, problems: [`data dir ${root} does not exist`], lastSeq: 0, memories: 0 };
  return withDataDirHeld(root, options.encryptionKey ?? null, () => verifyHeldDataDir(root, logger, options));
}

/** `verifyDataDir` for a caller that holds the data dir's lock already (`engram encrypt` checks what it swapped in). */
export async function verifyHeldDataDir(
  root: string,
  logger: Logger,
  options: { readonly embeddingsModel?: string; readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<VerifyResult> {
  const dataDir = new DataDir(root);
  const key = options.encryptionKey ?? null;
  let log: EventLog;
  try {
    log = await EventLog.open({ dir: dataDir.eventsDir, logger, readOnly: true, codec: eventCodecOf(root, key) });
  } catch (error) {
    return { ok: false, problems: [error instanceof Error ? error.message : String(error)], lastSeq: 0, memories: 0 };
  }
  if (!existsSync(dataDir.databasePath)) {
    return { ok: false, problems: [`no database at ${dataDir.databasePath}`], lastSeq: log.lastSeq, memories: 0 };
  }
  let projection: Projection;
  try {
    projection = Projection.open(dataDir.databasePath, { key: databaseKeyOf(root, key) });
  } catch (error) {
    return { ok: false, problems: [`database: ${error instanceof Error ? error.message : String(error)}`], lastSeq: log.lastSeq, memories: 0 };
  }
  try {
    let problems: string[];
    try {
      problems = compareWithLog(projection, log);
    } catch (error) {
      // A line that no longer decodes or opens (a sealed line changed or moved): the error names it.
      problems = [error instanceof Error ? error.message : String(error)];
    }
    try {
      projection.fullText.check();
    } catch (error) {
      problems.push(`full-text index: ${error instanceof Error ? error.message : String(error)}`);
    }
    const vectors = options.embeddingsModel
      ? vectorCoverage(dataDir.vectorsPath, databaseKeyOf(root, key), options.embeddingsModel, projection.queries.allEntries())
      : undefined;
    return { ok: problems.length === 0, problems, lastSeq: log.lastSeq, memories: projection.queries.count(), ...(vectors ? { vectors } : {}) };
  } finally {
    projection.close();
  }
}

/** Differences between the database and the pure fold of the whole log. */
export function compareWithLog(projection: Projection, log: EventSource): string[] {
  const problems: string[] = [];
  if (projection.lastSeq !== log.lastSeq) {
    problems.push(`the database is at seq ${projection.lastSeq}, the log at seq ${log.lastSeq}`);
  }
  const expected = replayEvents(log.eventsAfter(0)).entries;
  const actual = new Map([...projection.queries.allEntries()].map((entry) => [entry.id, entry]));
  problems.push(...compareEntries(actual, expected));
  return problems;
}

function swapIn(temp: string, target: string, key: AtRestKey): void {
  // Fold the old WAL into the old file first, so no stale WAL is ever read against the new file
  // (a corrupt old database's WAL is worthless: it is removed below).
  if (existsSync(target)) foldWal(target, key);
  rmSync(`${target}-wal`, { force: true });
  rmSync(`${target}-shm`, { force: true });
  renameSync(temp, target);
  fsyncPath(dirname(target));
}

function removeDatabaseFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
}
