import { mkdirSync, rmSync } from 'node:fs';
import type Database from 'better-sqlite3-multiple-ciphers';
import type { Logger } from 'pino';
import type { EncryptionKey } from '@engram/config';
import type { MemoryEvent } from '@engram/domain';
import type { Embedder } from '@engram/embeddings';
import { CommitFeed } from '../writes/commit-feed.js';
import { DataDir } from './data-dir.js';
import { assertKeyFitsDataDir, databaseKeyOf, eventCodecOf, markEncryptedIfNew } from './data-dir-encryption.js';
import { DataDirLock } from './data-dir-lock.js';
import { AUTO_COMPACT, EventLog, type EventLogOptions, type LogCompaction } from '../event-log/event-log.js';
import { FlatFiles } from '../flat-files/flat-files.js';
import { HybridSearch, type SearchObserver } from '../vectors/hybrid-search.js';
import type { MemoryQueries } from '../projection/memory-queries.js';
import { MemoryService } from '../writes/memory-service.js';
import { removeMovedAsideDatabases } from '../database/moved-aside-databases.js';
import { keyPragmas, openDatabaseOrMoveAside, shareDatabase } from '../database/database.js';
import { CURRENT_PAGE_CIPHER, type AtRestKey } from '../database/page-cipher.js';
import { Projection } from '../projection/projection.js';
import { VectorService } from '../vectors/vector-service.js';
import { VectorStore } from '../vectors/vector-store.js';
import { WalCheckpointer } from '../database/wal-checkpointer.js';
import { isOutOfSpace } from './out-of-space.js';
import { PostgresEventStore } from '../event-log/postgres/postgres-event-store.js';

export interface MemoryServiceOptions {
  readonly dataDir: string;
  readonly tier1MaxChars: number;
  readonly logger: Logger;
  /** The at-rest key (ENGRAM_ENCRYPTION_KEY); absent or null: a plaintext data dir. */
  readonly encryptionKey?: EncryptionKey | null;
  /** Default: () => new Date(). */
  readonly clock?: () => Date;
  /** When the log sums its references by itself (see EventLog.compact); default AUTO_COMPACT, null: only `engram compact`. */
  readonly autoCompact?: EventLogOptions['autoCompact'] | null;
  /** How soon a full disk is first checked for room again (default 1 s). */
  readonly diskFullRetryMs?: number;
  /** The log refused further writes after a failed write or fsync; the service cannot go on. */
  readonly onFatal?: (error: Error) => void;
  /**
   * ENGRAM_EVENT_STORE: the events in a PostgreSQL table shared with other replicas, copied into this
   * data dir's events/ (its read model's log). Absent or null: the data dir's file log, the source of truth.
   */
  readonly eventStore?: { readonly url: string; readonly pollMs?: number; readonly readYourWritesMs?: number } | null;
  /** Hybrid search: entries' vectors in vectors.db, the query embedded at search time. Absent: lexical only. */
  readonly embeddings?: {
    readonly embedder: Embedder;
    readonly queryTimeoutMs: number;
    /** Vector neighbours less similar (cosine) than this are not returned (EMBEDDINGS_MIN_SIMILARITY). */
    readonly minSimilarity: number;
    /** Default `quantised`; `exact` scans every vector (the reference the bench compares with). */
    readonly scan?: 'quantised' | 'exact';
    readonly observer?: SearchObserver;
  };
}

/**
 * Whether the log, past `seq`, holds a compaction's sum of references at or before `seq`: a database
 * at `seq` has applied some of those references already.
 */
export function summedAcross(log: { eventsAfter(seq: number): Iterable<MemoryEvent> }, seq: number): boolean {
  if (seq === 0) return false;
  for (const event of log.eventsAfter(seq)) {
    if (event.type === 'memory.referenced' && event.data.folds && event.data.folds.from <= seq) return true;
  }
  return false;
}

/** Events applied per SQLite transaction when catching up from the log. */
const CATCH_UP_CHUNK = 5_000;

/**
 * Opens the data dir as its single writer: takes the lock, opens the log (cutting a torn last line,
 * refusing a damaged middle), opens the database (moving a corrupt one aside), catches the database
 * up from the log, and re-renders every pool's flat files.
 */
export async function openMemoryService(options: MemoryServiceOptions): Promise<MemoryService> {
  const dataDir = new DataDir(options.dataDir);
  const key = options.encryptionKey ?? null;
  // Before the lock, which writes its file: a refused key changes nothing in the data dir.
  assertKeyFitsDataDir(dataDir.root, key);
  mkdirSync(dataDir.root, { recursive: true });
  const lock = DataDirLock.acquire(dataDir.lockPath);
  let db: Database.Database | undefined;
  let projection: Projection | undefined;
  let closeOnFailure: PostgresEventStore | null = null;
  try {
    // Again under the lock: `engram encrypt` may have finished in between.
    assertKeyFitsDataDir(dataDir.root, key);
    markEncryptedIfNew(dataDir.root, key);
    const databaseKey = databaseKeyOf(dataDir.root, key);
    if (databaseKey && databaseKey.cipher !== CURRENT_PAGE_CIPHER) {
      options.logger.info(
        { cipher: databaseKey.cipher, current: CURRENT_PAGE_CIPHER },
        'the databases are encrypted with an older, slower cipher: `npx engram encrypt` with the same key (services stopped) moves them to the current one',
      );
    }
    let onCompacted: (compaction: LogCompaction) => void = () => undefined;
    const codec = eventCodecOf(dataDir.root, key);
    const shared = options.eventStore
      ? await PostgresEventStore.open({
          url: options.eventStore.url,
          mirrorDir: dataDir.eventsDir,
          logger: options.logger,
          codec,
          ...(options.eventStore.pollMs ? { pollMs: options.eventStore.pollMs } : {}),
          ...(options.onFatal ? { onFatal: options.onFatal } : {}),
        })
      : null;
    closeOnFailure = shared;
    const log =
      shared ??
      (await EventLog.open({
        dir: dataDir.eventsDir,
        logger: options.logger,
        codec,
        ...(options.autoCompact === null ? {} : { autoCompact: options.autoCompact ?? AUTO_COMPACT }),
        onCompacted: (compaction) => onCompacted(compaction),
        ...(options.onFatal ? { onFatal: options.onFatal } : {}),
      }));
    const opened = openDatabaseOrMoveAside(dataDir.databasePath, databaseKey, options.logger);
    db = opened.db;
    projection = new Projection(db);
    // A full disk stops writes instead of the start: a service that exits on it is restarted onto the same full disk.
    let startedFull = opened.fullDisk ?? undefined;
    if (summedAcross(log, projection.lastSeq)) {
      // The database applied references that the log now sums into an event after it: catching up would count them twice.
      options.logger.warn({ databaseSeq: projection.lastSeq }, 'the database is behind a compaction of the event log; rebuilding it from the log');
      projection.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(dataDir.databasePath + suffix, { force: true });
      const rebuilt = openDatabaseOrMoveAside(dataDir.databasePath, databaseKey, options.logger);
      db = rebuilt.db;
      startedFull ??= rebuilt.fullDisk ?? undefined;
      projection = new Projection(db);
    }
    const { queries, eventIndex } = projection;
    onCompacted = (compaction) => eventIndex.noteCompaction(compaction.removed, compaction.summaries);
    const flatFiles = new FlatFiles(dataDir, (pool) => queries.activeEntries(pool), key);
    const filledFromEmpty = projection.lastSeq === 0;
    try {
      catchUp(projection, log, options.logger);
      for (const pool of queries.pools()) await flatFiles.refresh(pool);
    } catch (error) {
      if (!isOutOfSpace(error)) throw error;
      startedFull = error as Error;
    }
    const projectionDb = db;
    const checkpointer = new WalCheckpointer(
      db,
      dataDir.databasePath,
      (error) => options.logger.warn({ err: error }, 'a WAL checkpoint failed; the next one retries'),
      keyPragmas(databaseKey),
    );
    if (shared && filledFromEmpty) {
      // A new replica: the jobs of the history were handed to Redis by the replicas before it.
      projection.outboxCursor.markDispatched(Math.min(await shared.dispatchedSeq(), projection.lastSeq));
    }
    const hybrid = options.embeddings ? openHybridSearch(db, queries, dataDir, databaseKey, options.embeddings, options.logger) : undefined;
    const commits = new CommitFeed(options.logger);
    if (hybrid) commits.subscribe((events) => hybrid.store.noteEvents(events));
    return new MemoryService({
      log,
      commits,
      projection,
      queries,
      outboxCursor: projection.outboxCursor,
      eventIndex: projection.eventIndex,
      tombstones: projection.tombstones,
      removeStaleCopies: () => removeMovedAsideDatabases(dataDir.databasePath),
      flatFiles,
      lock,
      checkpointer,
      shareDatabase: () => shareDatabase(projectionDb),
      clock: options.clock ?? (() => new Date()),
      logger: options.logger,
      dataDir: dataDir.root,
      ...(startedFull ? { startedFull } : {}),
      ...(options.diskFullRetryMs ? { diskFullRetryMs: options.diskFullRetryMs } : {}),
      tier1MaxChars: options.tier1MaxChars,
      ...(options.onFatal ? { onFatal: options.onFatal } : {}),
      ...(hybrid ? { hybrid: hybrid.search, vectors: new VectorService(hybrid.store) } : {}),
      ...(shared ? { replica: shared } : {}),
      ...(options.eventStore?.readYourWritesMs ? { readYourWritesMs: options.eventStore.readYourWritesMs } : {}),
    });
  } catch (error) {
    await closeOnFailure?.close().catch(() => undefined);
    if (projection) projection.close();
    else db?.close();
    lock.release();
    throw error;
  }
}

/** Attaches vectors.db and brings its entry-to-text map up to the projection (which the log may have moved without it). */
function openHybridSearch(
  db: Database.Database,
  queries: MemoryQueries,
  dataDir: DataDir,
  key: AtRestKey,
  embeddings: NonNullable<MemoryServiceOptions['embeddings']>,
  logger: Logger,
): { readonly store: VectorStore; readonly search: HybridSearch } {
  const store = VectorStore.attach(db, dataDir.vectorsPath, key, {
    model: embeddings.embedder.model,
    logger,
    ...(embeddings.scan ? { scan: embeddings.scan } : {}),
  });
  const entries = store.sync([...queries.allEntries()]);
  logger.info(
    { entries, withVector: store.indexedCount(), model: embeddings.embedder.model, minSimilarity: embeddings.minSimilarity },
    'hybrid search on: vectors.db attached',
  );
  const search = new HybridSearch({
    vectors: store,
    embedder: embeddings.embedder,
    queryTimeoutMs: embeddings.queryTimeoutMs,
    minSimilarity: embeddings.minSimilarity,
    entry: (id) => queries.get(id),
    logger,
    ...(embeddings.observer ? { observer: embeddings.observer } : {}),
  });
  return { store, search };
}

/** Applies the events the database has not seen yet; returns how many. */
export function catchUp(
  projection: Projection,
  log: { readonly lastSeq: number; eventsAfter(seq: number): Iterable<MemoryEvent> },
  logger: Logger,
): number {
  if (projection.lastSeq > log.lastSeq) {
    throw new Error(
      `the database is at seq ${projection.lastSeq} but the event log ends at seq ${log.lastSeq}: events are missing from the log. ` +
        'Restore the events folder, or move engram.db aside and recover pools with `engram import-flat`.',
    );
  }
  const from = projection.lastSeq;
  // An empty database (seq 0 holds no memory) is filled without FTS triggers, then indexed once.
  const filling = from === 0 && log.lastSeq > 0;
  if (filling) projection.fullText.suspend();
  let chunk: MemoryEvent[] = [];
  let applied = 0;
  try {
    for (const event of log.eventsAfter(from)) {
      chunk.push(event);
      if (chunk.length >= CATCH_UP_CHUNK) {
        projection.apply(chunk);
        applied += chunk.length;
        chunk = [];
      }
    }
    projection.apply(chunk);
    applied += chunk.length;
  } finally {
    if (filling) projection.fullText.rebuild();
  }
  if (applied > 0) logger.info({ from, to: projection.lastSeq, applied }, 'caught the database up from the event log');
  backfillEventIndex(projection, log, logger);
  backfillTombstones(projection, log, logger);
  return applied;
}

/** A database made before purge tombstones: record the purges in its log, once, and drop what they had removed. */
function backfillTombstones(projection: Projection, log: { eventsAfter(seq: number): Iterable<MemoryEvent> }, logger: Logger): void {
  const from = projection.tombstones.coveredSeq;
  if (from < projection.lastSeq) {
    let chunk: MemoryEvent[] = [];
    for (const event of log.eventsAfter(from)) {
      if (event.seq > projection.lastSeq) break;
      chunk.push(event);
      if (chunk.length >= CATCH_UP_CHUNK) {
        projection.tombstones.backfill(chunk);
        chunk = [];
      }
    }
    projection.tombstones.backfill(chunk);
    logger.info({ from, to: projection.tombstones.coveredSeq }, 'recorded the purges of the event log');
  }
  const dropped = projection.dropResurrected();
  if (dropped.length > 0) {
    projection.scrub();
    logger.warn(
      { ids: dropped },
      'deleted entries the database held again after their purge (stored again under a purged id before that was refused)',
    );
  }
}

/** A database made before the event index existed: index its events from the log, once. */
function backfillEventIndex(projection: Projection, log: { eventsAfter(seq: number): Iterable<MemoryEvent> }, logger: Logger): void {
  const from = projection.eventIndex.indexedSeq;
  if (from >= projection.lastSeq) return;
  let chunk: MemoryEvent[] = [];
  const flush = () => {
    projection.eventIndex.backfill(chunk);
    chunk = [];
  };
  for (const event of log.eventsAfter(from)) {
    if (event.seq > projection.lastSeq) break;
    chunk.push(event);
    if (chunk.length >= CATCH_UP_CHUNK) flush();
  }
  flush();
  logger.info({ from, to: projection.eventIndex.indexedSeq }, 'indexed the event log by pool and entry');
}
