import type { Logger } from 'pino';
import { MemoryError } from '@engram/contracts';
import type { EntryChanges, MemoryEntry, MemoryEvent, NewEvent } from '@engram/domain';
import type { CommitFeed } from './commit-feed.js';
import type { EventStore } from '../event-log/event-store.js';
import type { FlatFiles } from '../flat-files/flat-files.js';
import { FreshIds } from './fresh-ids.js';
import { InFlightEntries } from './in-flight-entries.js';
import type { MemoryQueries } from '../projection/memory-queries.js';
import type { Projection } from '../projection/projection.js';
import type { WalCheckpointer } from '../database/wal-checkpointer.js';
import type { DiskFull } from '../data-dir/disk-full.js';
import { AppendRolledBack, isOutOfSpace, messageOf } from '../data-dir/out-of-space.js';
import { VersionConflict } from '../event-log/postgres/version-conflict.js';
import type { ReplicaStore } from '../event-log/replica-store.js';

export interface WritePipelineDeps {
  readonly log: Pick<EventStore, 'append'>;
  readonly projection: Pick<Projection, 'apply'>;
  readonly queries: Pick<MemoryQueries, 'get' | 'storedIds'>;
  readonly flatFiles: Pick<FlatFiles, 'refresh' | 'noteChanges'>;
  readonly commits: Pick<CommitFeed, 'publish'>;
  /** Told of each applied batch (it checkpoints the WAL off the event loop). */
  readonly checkpointer?: Pick<WalCheckpointer, 'noteCommit'>;
  readonly newId: () => string;
  /** Where a write that failed for want of space stops the writes, until the disk has room again. */
  readonly diskFull: Pick<DiskFull, 'enter' | 'refusal'>;
  readonly logger: Pick<Logger, 'fatal' | 'warn'>;
  /** Applying a durable batch failed: the database is behind the log and this process must restart. */
  readonly onFatal?: (error: Error) => void;
  /** One of several replicas on a shared event store: a write decided before other replicas' events for its pool were applied is stale. */
  readonly replica?: Pick<ReplicaStore, 'foreignEpoch' | 'changedSince'>;
}

interface Write {
  readonly events: readonly NewEvent[];
  /** The ids tracked in flight for it. */
  readonly ids: readonly string[];
  readonly changes: EntryChanges;
  /** The replica's foreign epoch when the write was decided (see ReplicaStore.changedSince). */
  readonly epoch: number;
  readonly resolve: (changes: EntryChanges) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The one way a write reaches the store: to the event store (durable), to the database (applied, in
 * seq order), to the commit feed, to the pool's flat files (rendered), and back to the writer.
 *
 * The one group commit: writes arriving while a batch is on its way are queued and then go together
 * as the next batch: one append (one durable write; the event store does not batch again), one
 * SQLite transaction, one render per pool. A batch goes to the log only
 * once the renders of the one before are done: rewriting a pool's files costs the same for one new
 * entry as for fifty, so writers arriving meanwhile share the next render instead of each forming
 * a batch of its own. A write resolves only once durable, applied and rendered; until it is applied,
 * the entries it changes are in flight (see InFlightEntries), so later commands decide against them.
 *
 * A batch that fails is answered `unavailable` (its writers may retry with the same Idempotency-Key),
 * never as an internal error: how far it got decides what the answer says. Refused by the log for
 * want of space: nothing was stored. Durable but not applied, or applied but not rendered: it was
 * stored, and shows once the store heals. When the cause is a full disk, writes stop (see DiskFull)
 * until `applyMissed` and the renders have brought the database and files back to the log.
 */
export class WritePipeline {
  private readonly inFlight: InFlightEntries;
  private readonly freshIds: FreshIds;
  private queue: Write[] = [];
  private running: Promise<void> | null = null;
  private failure: Error | null = null;

  constructor(private readonly deps: WritePipelineDeps) {
    this.inFlight = new InFlightEntries((id) => deps.queries.get(id));
    this.freshIds = new FreshIds(deps.newId, (ids) => deps.queries.storedIds(ids));
  }

  /** Acknowledged or in-flight state of an id: what a command decides against. */
  current(id: string): MemoryEntry | undefined {
    return this.inFlight.current(id);
  }

  /** Whether a write of the id is in flight: then its row is not yet its current state. */
  isInFlight(id: string): boolean {
    return this.inFlight.has(id);
  }

  /** An id neither stored nor in flight, never handed out before. */
  freshId(): string {
    return this.freshIds.take((id) => this.inFlight.has(id));
  }

  /**
   * Appends the events and resolves with the entries they leave (as decided), once durable, applied
   * and rendered. `unused`: an id the caller has just found to be neither stored nor in flight.
   */
  write(events: readonly NewEvent[], unused?: string): Promise<EntryChanges> {
    if (this.failure) return Promise.reject(stopped(this.failure));
    const refusal = this.deps.diskFull.refusal();
    if (refusal) return Promise.reject(refusal);
    const { ids, changes } = this.inFlight.track(events, unused);
    return new Promise<EntryChanges>((resolve, reject) => {
      this.queue.push({ events, ids, changes, epoch: this.deps.replica?.foreignEpoch ?? 0, resolve, reject });
      // Started a microtask later, so the writes of this turn of the event loop share the batch.
      this.running ??= Promise.resolve().then(() => this.run());
    });
  }

  /** Resolves once no write of the id is in flight (a retried store waits for the first). */
  settled(id: string): Promise<void> {
    return this.inFlight.settled(id);
  }

  /** Resolves once every queued write has landed. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        await this.commit(batch);
      }
    } finally {
      this.running = null;
    }
  }

  private async commit(queued: readonly Write[]): Promise<void> {
    const batch = this.withoutStale(queued);
    if (batch.length === 0) return;
    const untrack = () => this.inFlight.untrack(batch.flatMap((write) => write.ids));
    // Queued behind a batch that found the disk full: refused as the writes after it are.
    const refusal = this.failure ? stopped(this.failure) : this.deps.diskFull.refusal();
    if (refusal) {
      untrack();
      for (const write of batch) write.reject(refusal);
      return;
    }
    let events: MemoryEvent[];
    try {
      // Every write of the batch is fresh as of this epoch (withoutStale); the store refuses the batch if it no longer is.
      const decided = this.deps.replica ? { foreignEpoch: this.deps.replica.foreignEpoch } : undefined;
      events = await this.deps.log.append(
        batch.flatMap((write) => write.events),
        decided,
      );
    } catch (error) {
      untrack();
      this.fail(batch, error, error instanceof AppendRolledBack ? 'not stored' : 'maybe stored');
      return;
    }
    try {
      this.apply(events);
    } catch (error) {
      untrack();
      this.fail(batch, error, 'stored');
      return;
    }
    untrack();
    const pools = new Set(batch.flatMap((write) => write.events.filter((event) => event.type !== 'memory.referenced').map((event) => event.pool)));
    try {
      await Promise.all([...pools].map((pool) => this.deps.flatFiles.refresh(pool)));
    } catch (error) {
      this.fail(batch, error, 'stored');
      return;
    }
    for (const write of batch) write.resolve(write.changes);
  }

  /**
   * Writes decided before events of another replica for their pool were applied are refused with
   * VersionConflict (the service decides them again); the others go on.
   */
  private withoutStale(queued: readonly Write[]): readonly Write[] {
    const replica = this.deps.replica;
    if (!replica) return queued;
    const fresh: Write[] = [];
    for (const write of queued) {
      const pools = new Set(write.events.map((event) => event.pool));
      if (!replica.changedSince(pools, write.epoch)) {
        fresh.push(write);
        continue;
      }
      this.inFlight.untrack(write.ids);
      write.reject(new VersionConflict([...pools]));
    }
    return fresh;
  }

  /**
   * Events another replica committed, copied by the event store: into the database and out to the
   * commit feed, and the flat files of their pools rendered again (in the background: no writer waits).
   */
  applyForeign(events: readonly MemoryEvent[]): void {
    if (events.length === 0) return;
    this.apply(events);
    const pools = new Set(events.filter((event) => event.type !== 'memory.referenced').map((event) => event.pool));
    for (const pool of pools) {
      this.deps.flatFiles
        .refresh(pool)
        .catch((error: unknown) =>
          this.deps.logger.warn(
            { err: error, pool },
            "rendering a pool's flat files after another replica's write failed; the next write renders them",
          ),
        );
    }
  }

  /** Durable events the database has not applied (a batch whose apply failed for want of space), applied now. */
  applyMissed(events: Iterable<MemoryEvent>): void {
    const missed = [...events];
    if (missed.length > 0) this.apply(missed);
  }

  private fail(batch: readonly Write[], error: unknown, outcome: Outcome): void {
    if (error instanceof VersionConflict) {
      // Nothing was stored: the service decides each write again.
      for (const write of batch) write.reject(error);
      return;
    }
    if (isOutOfSpace(error)) this.deps.diskFull.enter(error);
    const answer = unfinished(error, outcome);
    for (const write of batch) write.reject(answer);
  }

  /** A durable batch, in seq order, into the database and out to the commit feed. */
  private apply(events: readonly MemoryEvent[]): void {
    try {
      this.deps.flatFiles.noteChanges(this.deps.projection.apply(events));
    } catch (error) {
      // Out of space: the transaction rolled back, the events are in the log; applyMissed takes them once there is room.
      if (isOutOfSpace(error)) throw error;
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.deps.logger.fatal({ err: this.failure }, 'applying a durable batch to the database failed; refusing further writes until restart');
      this.deps.onFatal?.(this.failure);
      throw this.failure;
    }
    for (const event of events) {
      if (event.type === 'memory.stored' || event.type === 'memory.consolidated') this.freshIds.noteUsed(event.data.id);
    }
    this.deps.checkpointer?.noteCommit(events.length);
    this.deps.commits.publish(events);
  }
}

/** How far a failed write got: refused by the log, in the log and maybe more, or unknown (the log failed otherwise). */
type Outcome = 'not stored' | 'stored' | 'maybe stored';

/** A write that did not finish, as its writer is answered: unavailable, saying whether it was stored. */
function unfinished(error: unknown, outcome: Outcome): MemoryError {
  const cause = error instanceof AppendRolledBack ? error.reason : error;
  const reason = messageOf(cause);
  const full = isOutOfSpace(cause) ? 'the data disk is full' : 'the write did not finish';
  const what =
    outcome === 'not stored'
      ? 'nothing was stored'
      : outcome === 'stored'
        ? 'it was stored and shows once memory has caught up; a retry with the same Idempotency-Key answers with it'
        : 'it may have been stored; a retry with the same Idempotency-Key answers with it if so';
  return new MemoryError('unavailable', `${full} (${reason}): ${what}`);
}

/** A write after one that could not be applied for another reason than space: the process restarts to recover. */
function stopped(failure: Error): MemoryError {
  return new MemoryError('unavailable', `memory takes no writes until it restarts (a write failed: ${failure.message}): nothing was stored`);
}
