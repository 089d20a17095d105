import type { Logger } from 'pino';
import type { EntryChanges, MemoryEntry, MemoryEvent, NewEvent } from '@engram/domain';
import type { CommitFeed } from './commit-feed.js';
import type { EventStore } from '../event-log/event-store.js';
import type { FlatFiles } from '../flat-files/flat-files.js';
import { FreshIds } from './fresh-ids.js';
import { InFlightEntries } from './in-flight-entries.js';
import type { MemoryQueries } from '../projection/memory-queries.js';
import type { Projection } from '../projection/projection.js';
import type { WalCheckpointer } from '../database/wal-checkpointer.js';

export interface WritePipelineDeps {
  readonly log: Pick<EventStore, 'append'>;
  readonly projection: Pick<Projection, 'apply'>;
  readonly queries: Pick<MemoryQueries, 'get' | 'storedIds'>;
  readonly flatFiles: Pick<FlatFiles, 'refresh' | 'noteChanges'>;
  readonly commits: Pick<CommitFeed, 'publish'>;
  /** Told of each applied batch (it checkpoints the WAL off the event loop). */
  readonly checkpointer?: Pick<WalCheckpointer, 'noteCommit'>;
  readonly newId: () => string;
  readonly logger: Pick<Logger, 'fatal'>;
  /** Applying a durable batch failed: the database is behind the log and this process must restart. */
  readonly onFatal?: (error: Error) => void;
}

interface Write {
  readonly events: readonly NewEvent[];
  /** The ids tracked in flight for it. */
  readonly ids: readonly string[];
  readonly changes: EntryChanges;
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
    if (this.failure) return Promise.reject(this.failure);
    const { ids, changes } = this.inFlight.track(events, unused);
    return new Promise<EntryChanges>((resolve, reject) => {
      this.queue.push({ events, ids, changes, resolve, reject });
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

  private async commit(batch: readonly Write[]): Promise<void> {
    const untrack = () => this.inFlight.untrack(batch.flatMap((write) => write.ids));
    try {
      if (this.failure) throw this.failure;
      this.apply(await this.deps.log.append(batch.flatMap((write) => write.events)));
    } catch (error) {
      untrack();
      for (const write of batch) write.reject(error);
      return;
    }
    untrack();
    const pools = new Set(batch.flatMap((write) => write.events.filter((event) => event.type !== 'memory.referenced').map((event) => event.pool)));
    try {
      await Promise.all([...pools].map((pool) => this.deps.flatFiles.refresh(pool)));
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    for (const write of batch) write.resolve(write.changes);
  }

  /** A durable batch, in seq order, into the database and out to the commit feed. */
  private apply(events: readonly MemoryEvent[]): void {
    try {
      this.deps.flatFiles.noteChanges(this.deps.projection.apply(events));
    } catch (error) {
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
