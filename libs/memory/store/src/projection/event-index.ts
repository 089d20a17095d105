import type Database from 'better-sqlite3-multiple-ciphers';
import { affectedIds, type MemoryEvent } from '@engram/domain';
import type { DatabaseMeta } from '../database/database-meta.js';

/**
 * Which events belong to which pool and which entry: seqs only, never content (the event bodies are
 * read from the log by seq, so a purge's redaction of the log is all there is to forget). Written in
 * the projection's transaction, so it is exactly as current as the database.
 */
export const EVENT_INDEX_SQL = `
CREATE TABLE IF NOT EXISTS pool_events (pool TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (pool, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_events (
  pool TEXT NOT NULL, memory_id TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (pool, memory_id, seq)
) WITHOUT ROWID;
-- Last seq the two tables cover; behind last_seq only in a database made before they existed.
INSERT OR IGNORE INTO meta (key, value) VALUES ('events_indexed_seq', 0);
`;

/** An event a compaction of the log removed (its references are summed into a later event). */
export interface RemovedEvent {
  readonly seq: number;
  readonly pool: string;
  readonly ids: readonly string[];
}

export interface EventSeqQuery {
  readonly pool: string;
  /** Only the events about this entry. */
  readonly memoryId?: string;
  readonly after: number;
  readonly limit: number;
}

export class EventIndex {
  private readonly statements;
  private indexedSeqValue: number;

  constructor(
    private readonly db: Database.Database,
    private readonly meta: DatabaseMeta,
  ) {
    db.exec(EVENT_INDEX_SQL);
    this.statements = {
      addPool: db.prepare<[string, number]>('INSERT OR IGNORE INTO pool_events (pool, seq) VALUES (?, ?)'),
      addMemory: db.prepare<[string, string, number]>('INSERT OR IGNORE INTO memory_events (pool, memory_id, seq) VALUES (?, ?, ?)'),
      removePool: db.prepare<[string, number]>('DELETE FROM pool_events WHERE pool = ? AND seq = ?'),
      removeMemory: db.prepare<[string, string, number]>('DELETE FROM memory_events WHERE pool = ? AND memory_id = ? AND seq = ?'),
      ofPool: db.prepare<[string, number, number], { seq: number }>('SELECT seq FROM pool_events WHERE pool = ? AND seq > ? ORDER BY seq LIMIT ?'),
      ofMemory: db.prepare<[string, string, number, number], { seq: number }>(
        'SELECT seq FROM memory_events WHERE pool = ? AND memory_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
    };
    this.indexedSeqValue = meta.get('events_indexed_seq');
  }

  /** Last seq indexed. */
  get indexedSeq(): number {
    return this.indexedSeqValue;
  }

  /**
   * Indexes the events after seq `after`, where the index must stand; call inside the transaction
   * that applies them. Skipped while the index is behind (a database made before it existed, which
   * `backfillEventIndex` fills from the log at start).
   */
  add(events: readonly MemoryEvent[], after: number): void {
    if (this.indexedSeqValue !== after) return;
    const before = this.indexedSeqValue;
    for (const event of events) {
      if (event.seq <= this.indexedSeqValue) continue;
      this.statements.addPool.run(event.pool, event.seq);
      for (const id of new Set(affectedIds(event))) this.statements.addMemory.run(event.pool, id, event.seq);
      this.indexedSeqValue = event.seq;
    }
    if (this.indexedSeqValue !== before) this.meta.set('events_indexed_seq', this.indexedSeqValue);
  }

  /** Indexes events the database already holds, in a transaction of their own (see backfillEventIndex). */
  backfill(events: readonly MemoryEvent[]): void {
    this.db.transaction(() => this.add(events, this.indexedSeqValue)).immediate();
  }

  /** A compaction of the log removed these seqs and wrote these events in place of others: the index follows. */
  noteCompaction(removed: readonly RemovedEvent[], summaries: readonly MemoryEvent[]): void {
    this.db
      .transaction(() => {
        for (const { seq, pool, ids } of removed) {
          this.statements.removePool.run(pool, seq);
          for (const id of new Set(ids)) this.statements.removeMemory.run(pool, id, seq);
        }
        for (const event of summaries) {
          if (event.seq > this.indexedSeqValue) continue;
          for (const id of new Set(affectedIds(event))) this.statements.addMemory.run(event.pool, id, event.seq);
        }
      })
      .immediate();
  }

  /** After a failed transaction: the index is what the database holds. */
  reload(): void {
    this.indexedSeqValue = this.meta.get('events_indexed_seq');
  }

  /** Seqs of the pool's (or one entry's) events after `after`, ascending, at most `limit`. */
  seqs(query: EventSeqQuery): number[] {
    const rows =
      query.memoryId === undefined
        ? this.statements.ofPool.all(query.pool, query.after, query.limit)
        : this.statements.ofMemory.all(query.pool, query.memoryId, query.after, query.limit);
    return rows.map((row) => row.seq);
  }
}
