import type Database from 'better-sqlite3-multiple-ciphers';

/**
 * The `meta` table's counters, the one place that reads and writes them. `last_seq`: last event
 * applied; `dispatched_seq`: the outbox cursor; `events_indexed_seq`: how far the event index goes;
 * `fts_stale`: a bulk fill without full-text triggers has not finished; `schema_version`;
 * `tombstones_seq`: how far the purge tombstones go.
 */
export type MetaKey = 'last_seq' | 'dispatched_seq' | 'events_indexed_seq' | 'fts_stale' | 'schema_version' | 'tombstones_seq';

export class DatabaseMeta {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      get: db.prepare<[MetaKey], { value: number }>('SELECT value FROM meta WHERE key = ?'),
      set: db.prepare<[MetaKey, number]>('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      remove: db.prepare<[MetaKey]>('DELETE FROM meta WHERE key = ?'),
    };
  }

  /** The counter's value; 0 when it is not set. */
  get(key: MetaKey): number {
    return this.statements.get.get(key)?.value ?? 0;
  }

  set(key: MetaKey, value: number): void {
    this.statements.set.run(key, value);
  }

  remove(key: MetaKey): void {
    this.statements.remove.run(key);
  }
}
