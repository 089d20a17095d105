import type { DatabaseMeta } from '../database/database-meta.js';

/** How far the outbox got: the last event already turned into jobs, kept in the database's `meta`. */
export class OutboxCursor {
  constructor(private readonly meta: DatabaseMeta) {}

  dispatchedSeq(): number {
    return this.meta.get('dispatched_seq');
  }

  markDispatched(seq: number): void {
    this.meta.set('dispatched_seq', seq);
  }
}
