import type { MemoryEvent } from '@engram/domain';

/**
 * What the memory service needs of an event store shared by several replicas (PostgresEventStore):
 * the events others commit, whether a decision is stale, read-your-writes, and the jobs' position.
 */
export interface ReplicaStore {
  /** Starts handing over, in seq order, the events this replica did not append itself (to apply). */
  follow(listener: (events: readonly MemoryEvent[]) => void): void;
  /** Grows each time events of other replicas are handed over; taken when a write is decided. */
  readonly foreignEpoch: number;
  /** Whether events of other replicas for one of these pools were handed over after `epoch`. */
  changedSince(pools: Iterable<string>, epoch: number): boolean;
  /** Resolves (bounded by `timeoutMs`) once this replica applied everything the store held when asked; false if not. */
  caughtUp(timeoutMs: number): Promise<boolean>;
  /** The highest seq whose jobs a replica handed to Redis, kept in the store for every replica. */
  dispatchedSeq(): Promise<number>;
  noteDispatched(seq: number): Promise<void>;
}
