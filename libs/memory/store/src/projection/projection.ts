import type Database from 'better-sqlite3-multiple-ciphers';
import { affectedIds, changesOf, referencesOf, type MemoryEntry, type MemoryEvent } from '@engram/domain';
import { openDatabase, type DatabaseOptions } from '../database/database.js';
import { DatabaseMeta } from '../database/database-meta.js';
import { EventIndex } from './event-index.js';
import { FullTextIndex } from './full-text-index.js';
import { MemoryQueries } from './memory-queries.js';
import { MEMORY_COLUMNS, toRow, type MemoryRow } from './memory-row.js';
import { OutboxCursor } from './outbox-cursor.js';
import { PurgeTombstones } from './purge-tombstones.js';

/** One entry before and after an event (undefined: did not exist / was purged). */
export interface EntryChange {
  readonly before: MemoryEntry | undefined;
  readonly after: MemoryEntry | undefined;
}

/**
 * The SQLite projection of the log (WAL): events in, rows out. Every event is applied through the
 * domain's `changesOf`, the same function `evolve` uses, so the database cannot disagree with the
 * pure model; the one exception, memory.referenced, is two counters written in SQL (see applyOne).
 * `last_seq` is stored in the same transaction as the changes: applying an event twice changes
 * nothing. What the tables answer is `queries`; the other parts of the same database hang off it too.
 */
export class Projection {
  private readonly statements;
  private readonly meta: DatabaseMeta;
  private lastSeqValue: number;
  readonly queries: MemoryQueries;
  readonly fullText: FullTextIndex;
  readonly outboxCursor: OutboxCursor;
  /** Which events belong to which pool and entry, kept in the same transactions as the entries. */
  readonly eventIndex: EventIndex;
  /** What purges forbid (ids, texts' fingerprints), kept in the same transactions as the entries. */
  readonly tombstones: PurgeTombstones;

  /** Over a database opened by database.ts; finishes a full-text fill an earlier process did not. */
  constructor(private readonly db: Database.Database) {
    this.meta = new DatabaseMeta(db);
    this.queries = new MemoryQueries(db);
    this.fullText = new FullTextIndex(db, this.meta);
    this.outboxCursor = new OutboxCursor(this.meta);
    this.eventIndex = new EventIndex(db, this.meta);
    this.tombstones = new PurgeTombstones(db, this.meta);
    this.statements = {
      // Positional: binding fifteen named parameters costs a property lookup each, on every stored row.
      insert: db.prepare<[readonly unknown[]]>(
        `INSERT INTO memories (${MEMORY_COLUMNS.join(', ')}) VALUES (${MEMORY_COLUMNS.map(() => '?').join(', ')})`,
      ),
      // Two updates: naming `content` in SET fires the FTS trigger, so do it only when content changed.
      updateWithContent: db.prepare<[MemoryRow]>(
        `UPDATE memories SET type = @type, category = @category, content = @content, confidence = @confidence,
           updated_at = @updated_at, last_referenced = @last_referenced, reference_count = @reference_count,
           is_confirmed = @is_confirmed, is_archived = @is_archived, superseded_by = @superseded_by, supersedes = @supersedes
         WHERE id = @id`,
      ),
      updateWithoutContent: db.prepare<[Omit<MemoryRow, 'content'>]>(
        `UPDATE memories SET type = @type, category = @category, confidence = @confidence,
           updated_at = @updated_at, last_referenced = @last_referenced, reference_count = @reference_count,
           is_confirmed = @is_confirmed, is_archived = @is_archived, superseded_by = @superseded_by, supersedes = @supersedes
         WHERE id = @id`,
      ),
      // changesOf's memory.referenced, as one statement per id (see applyOne).
      reference: db.prepare<[string, number, string, string]>(
        'UPDATE memories SET last_referenced = ?, reference_count = reference_count + ? WHERE id = ? AND pool = ?',
      ),
      delete: db.prepare<[string]>('DELETE FROM memories WHERE id = ?'),
      touchPool: db.prepare<[string, number]>(
        'INSERT INTO pools (pool, last_seq) VALUES (?, ?) ON CONFLICT (pool) DO UPDATE SET last_seq = excluded.last_seq',
      ),
    };
    this.lastSeqValue = this.meta.get('last_seq');
    this.fullText.finishInterruptedFill();
  }

  /** Opens a database file (see openDatabase) and the projection over it. */
  static open(path: string, options: DatabaseOptions = {}): Projection {
    const db = openDatabase(path, options);
    try {
      return new Projection(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  get lastSeq(): number {
    return this.lastSeqValue;
  }

  /** Applies events in one transaction; skips those already applied. Returns the entry changes made. */
  apply(events: readonly MemoryEvent[]): EntryChange[] {
    const applied: EntryChange[] = [];
    const poolSeqs = new Map<string, number>();
    try {
      this.db
        .transaction(() => {
          const from = this.lastSeqValue;
          // Seqs rise; a gap is references a compaction summed into a later event (the log's scan checks that).
          for (const event of events) {
            if (event.seq <= this.lastSeqValue) continue;
            this.tombstones.note(event, this.lastSeqValue);
            this.applyOne(event, applied);
            poolSeqs.set(event.pool, event.seq);
            this.lastSeqValue = event.seq;
          }
          this.eventIndex.add(events, from);
          this.tombstones.save();
          for (const [pool, seq] of poolSeqs) this.statements.touchPool.run(pool, seq);
          this.meta.set('last_seq', this.lastSeqValue);
        })
        .immediate();
    } catch (error) {
      this.lastSeqValue = this.meta.get('last_seq');
      this.eventIndex.reload();
      this.tombstones.reload();
      throw error;
    }
    return applied;
  }

  private applyOne(event: MemoryEvent, applied: EntryChange[]): void {
    if (event.type === 'memory.referenced') {
      // Every search that records references makes one of these, so they are most of the log; read
      // no row and build no entry for them. Same effect as changesOf (each id once, only entries of
      // the event's pool), held to it by the replay property test; nothing a flat file shows changes.
      referencesOf(event).forEach(({ count, at }, id) => this.statements.reference.run(at, count, id, event.pool));
      return;
    }
    const before = new Map<string, MemoryEntry | undefined>();
    for (const id of affectedIds(event)) before.set(id, this.queries.get(id));
    const changes = changesOf(
      event,
      (id) => (before.has(id) ? before.get(id) : this.queries.get(id)),
      (id) => this.tombstones.isPurged(id),
    );
    for (const [id, after] of changes) {
      const previous = before.get(id);
      applied.push({ before: previous, after });
      if (!after) {
        if (previous) this.statements.delete.run(id);
      } else if (!previous) {
        const row = toRow(after);
        this.statements.insert.run(MEMORY_COLUMNS.map((column) => row[column]));
      } else if (after.content !== previous.content) {
        this.statements.updateWithContent.run(toRow(after));
      } else {
        const { content: _content, ...row } = toRow(after);
        this.statements.updateWithoutContent.run(row);
      }
    }
  }

  /**
   * Deletes entries a purge removed that a store under the same id made again: a log written before
   * purged ids were refused holds such stores (their content redacted), which changesOf now ignores,
   * so a database built then disagrees with a replay until this runs (at start). Returns their ids.
   */
  dropResurrected(): string[] {
    const ids = this.tombstones.resurrectedIds();
    if (ids.length > 0) this.db.transaction(() => ids.forEach((id) => this.statements.delete.run(id))).immediate();
    return ids;
  }

  /**
   * After a purge: FTS5 keeps a deleted document's terms in older index segments until they are
   * merged, and the WAL keeps old page copies; optimize and checkpoint so no trace stays on disk.
   */
  scrub(): void {
    this.fullText.optimize();
    this.checkpoint();
  }

  /** Moves the WAL into the main file and truncates it. */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  close(): void {
    if (!this.db.open) return;
    this.checkpoint();
    this.db.close();
  }
}
