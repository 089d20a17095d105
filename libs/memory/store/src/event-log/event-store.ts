import type { MemoryEvent, NewEvent } from '@engram/domain';

/**
 * Where the memory service keeps its events: the one seam between the service and the medium. Today
 * `EventLog` (NDJSON segment files, one line per event); a database-backed store or an encoding of
 * another kind (e.g. encrypted lines) would implement this same interface.
 *
 * Batching is the caller's (the WritePipeline's group commit): a store makes each `append` durable
 * as one write and does not merge calls. Appends are taken one at a time in call order; `redact`
 * runs between them, never during one.
 *
 * Reads are synchronous: the file log answers them from the page cache on the writer's thread. A
 * store that can only read asynchronously would turn this half of the seam into promises.
 */
export interface EventStore {
  /** Last durable seq (0 for an empty store). */
  readonly lastSeq: number;

  /**
   * Gives the batch its seqs (gap-free, following `lastSeq`, in order) and resolves once all of it is
   * durable. A batch that could not be made durable rejects, and so does every later append: after
   * a failed write nothing can be assumed about the medium, so the process must restart. Except for
   * want of space: then the store is left as it was before the batch and rejects with
   * AppendRolledBack (nothing of it stored), and takes later appends as if it had never come.
   *
   * `decided.foreignEpoch` (a store shared by replicas): the ReplicaStore epoch the batch was decided
   * at; if events of other replicas for its pools were applied since, nothing is stored and the
   * append rejects with VersionConflict (the caller decides again). A store of one writer ignores it.
   */
  append(batch: readonly NewEvent[], decided?: { readonly foreignEpoch: number }): Promise<MemoryEvent[]>;

  /** Durable events with seq > after, in order, at most `limit`, those `accept` keeps. */
  read(after: number, limit?: number, accept?: (event: MemoryEvent) => boolean): MemoryEvent[];

  /** The durable events with these seqs (ascending): costs what it returns, not the size of the store. */
  readSeqs(seqs: readonly number[]): MemoryEvent[];

  /** Every durable event with seq > after, in order, read lazily (catch-up, replay). */
  eventsAfter(after: number): Iterable<MemoryEvent>;

  /** Forgets content for real: every stored event carrying content of these ids is rewritten without it. Returns how many. */
  redact(ids: ReadonlySet<string>): Promise<number>;

  /** Finishes the redactions of purges that opening the store had no space for (a no-op otherwise). */
  redactPending(): Promise<void>;

  /** Waits for the append in progress, then refuses further appends. */
  close(): Promise<void>;
}
