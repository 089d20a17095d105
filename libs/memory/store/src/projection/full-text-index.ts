import type Database from 'better-sqlite3-multiple-ciphers';
import type { DatabaseMeta } from '../database/database-meta.js';
import { SCHEMA_SQL } from '../database/schema.js';

/**
 * Upkeep of `memories_fts` (FTS5 over `memories.content`, kept by triggers): suspended for a bulk
 * fill and rebuilt in one pass after it, checked by `engram verify`, optimized after a purge.
 */
export class FullTextIndex {
  constructor(
    private readonly db: Database.Database,
    private readonly meta: DatabaseMeta,
  ) {}

  /**
   * For filling an empty database: without the FTS triggers every row is written once, and
   * `rebuild` then indexes the final content in one pass, which is faster than indexing each insert
   * and update as it comes. Marked stale until then, so an interrupted fill is finished on open.
   */
  suspend(): void {
    this.db.exec(
      'DROP TRIGGER IF EXISTS memories_fts_insert; DROP TRIGGER IF EXISTS memories_fts_delete; DROP TRIGGER IF EXISTS memories_fts_update;',
    );
    this.meta.set('fts_stale', 1);
  }

  /** Restores the triggers and indexes every row. */
  rebuild(): void {
    this.db.exec(SCHEMA_SQL);
    this.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')");
    this.meta.remove('fts_stale');
  }

  /** A fill that did not finish (the process died between suspend and rebuild): rebuild now. */
  finishInterruptedFill(): void {
    if (this.meta.get('fts_stale') === 1) this.rebuild();
  }

  /** Checks the index against its content table; throws when they disagree. */
  check(): void {
    this.db.exec("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)");
  }

  /** FTS5 keeps a deleted document's terms in older index segments until they are merged: merge them all. */
  optimize(): void {
    this.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')");
  }
}
