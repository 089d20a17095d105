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
   * Indexes the events that directly follow the last indexed one; call inside the transaction that
   * applies them. Others are skipped: already indexed, or beyond a gap that only a database made
   * before the index existed has, and which `backfillEventIndex` fills from the log at start.
   */
  add(events: readonly MemoryEvent[]): void {
    const before = this.indexedSeqValue;
    for (const event of events) {
      if (event.seq !== this.indexedSeqValue + 1) continue;
      this.statements.addPool.run(event.pool, event.seq);
      for (const id of new Set(affectedIds(event))) this.statements.addMemory.run(event.pool, id, event.seq);
      this.indexedSeqValue = event.seq;
    }
    if (this.indexedSeqValue !== before) this.meta.set('events_indexed_seq', this.indexedSeqValue);
  }

  /** Indexes events the database already holds, in a transaction of their own (see backfillEventIndex). */
  backfill(events: readonly MemoryEvent[]): void {
    this.db.transaction(() => this.add(events)).immediate();
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
