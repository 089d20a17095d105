import type { Logger } from 'pino';
import type { CommitFeed } from './commit-feed.js';
import type { DataDirLock } from '../data-dir/data-dir-lock.js';
import type { EventIndex } from '../projection/event-index.js';
import type { EventStore } from '../event-log/event-store.js';
import type { ReplicaStore } from '../event-log/replica-store.js';
import type { FlatFiles } from '../flat-files/flat-files.js';
import type { HybridSearch } from '../vectors/hybrid-search.js';
import type { MemoryQueries } from '../projection/memory-queries.js';
import type { OutboxCursor } from '../projection/outbox-cursor.js';
import type { Projection } from '../projection/projection.js';
import type { PurgeTombstones } from '../projection/purge-tombstones.js';
import type { VectorService } from '../vectors/vector-service.js';
import type { WalCheckpointer } from '../database/wal-checkpointer.js';

/** The side effects the service works through; each is a class of this lib, replaceable by a typed fake. */
export interface MemoryServiceDeps {
  readonly log: Pick<EventStore, 'append' | 'read' | 'readSeqs' | 'redact' | 'redactPending' | 'eventsAfter' | 'close'>;
  /** Which events belong to which pool and entry (the projection's). */
  readonly eventIndex: Pick<EventIndex, 'seqs'>;
  /** Events into rows, and the purge's scrub of the database. */
  readonly projection: Pick<Projection, 'apply' | 'scrub' | 'close' | 'lastSeq'>;
  /** What the database answers (see MemoryQueries). */
  readonly queries: Pick<
    MemoryQueries,
    | 'get'
    | 'storedIds'
    | 'list'
    | 'page'
    | 'activeEntries'
    | 'search'
    | 'lexicalSearch'
    | 'idsOfPool'
    | 'byConfidence'
    | 'tier1Candidates'
    | 'activeCount'
    | 'poolSeq'
    | 'stats'
    | 'pools'
  >;
  readonly outboxCursor: Pick<OutboxCursor, 'dispatchedSeq' | 'markDispatched'>;
  /** What applied purges forbid (the projection's). */
  readonly tombstones: Pick<PurgeTombstones, 'isPurged' | 'forbids'>;
  readonly flatFiles: Pick<FlatFiles, 'refresh' | 'noteChanges'>;
  /** Where each applied batch is published (the outbox and the vector store read it). */
  readonly commits: CommitFeed;
  readonly lock: Pick<DataDirLock, 'release'> | null;
  /** Deletes the copies of the database a purge must also reach (see removeMovedAsideDatabases); returns their names. */
  readonly removeStaleCopies?: () => readonly string[];
  /** Checkpoints the database's WAL off the event loop; told of each commit, stopped before the database closes. */
  readonly checkpointer?: Pick<WalCheckpointer, 'noteCommit' | 'stop'>;
  readonly clock: () => Date;
  readonly logger: Logger;
  /** The data dir: its file system's free space tells when a full disk may take writes again. */
  readonly dataDir?: string;
  /**
   * Makes the database's connection one that others can read beside again, once there is room: opened on
   * a full disk, it keeps its WAL index in memory and locks them out (see shareDatabase in database.ts).
   */
  readonly shareDatabase?: () => void;
  /** The start found the disk full (catching up the database, rendering the files): start with writes stopped. */
  readonly startedFull?: Error;
  /** How soon a full disk is first checked for room again (default 1 s, doubling up to 10 s). */
  readonly diskFullRetryMs?: number;
  /** A durable batch could not be applied: the service cannot go on. */
  readonly onFatal?: (error: Error) => void;
  readonly tier1MaxChars: number;
  readonly newId?: () => string;
  /** Set when an embeddings endpoint is configured: searches with words fuse meaning with words. */
  readonly hybrid?: Pick<HybridSearch, 'search'>;
  readonly vectors?: VectorService;
  /** Set when the event store is shared with other memory replicas (ENGRAM_EVENT_STORE=postgres://…). */
  readonly replica?: ReplicaStore;
  /** How long a read waits for this replica to apply writes acknowledged elsewhere (default 2 s). */
  readonly readYourWritesMs?: number;
}
