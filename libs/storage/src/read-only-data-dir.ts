import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { MemoryEntry } from '@engram/domain';
import { DataDir } from './data-dir.js';
import { toEntry, type MemoryRow } from './memory-row.js';
import { readPoolStats, type PoolStats } from './pool-stats.js';
import { validPool } from './validation.js';

/**
 * Read-only access to a data dir's database for `engram export` and `engram stats`: no lock, so it
 * works while the memory service runs (WAL lets readers in), and it never writes.
 */
export class ReadOnlyDataDir {
  private constructor(private readonly db: Database.Database) {}

  static open(root: string): ReadOnlyDataDir {
    const path = new DataDir(root).databasePath;
    if (!existsSync(path)) throw new Error(`no database at ${path}; start the memory service or run \`engram replay\` first`);
    return new ReadOnlyDataDir(new Database(path, { readonly: true, fileMustExist: true }));
  }

  /** Every entry of a pool, archived ones too, oldest first. */
  entries(pool: string): MemoryEntry[] {
    return this.db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE pool = ? ORDER BY created_at, id').all(validPool(pool)).map(toEntry);
  }

  lastSeq(): number {
    return this.db.prepare<[], { value: number }>("SELECT value FROM meta WHERE key = 'last_seq'").get()?.value ?? 0;
  }

  stats(): PoolStats[] {
    return readPoolStats(this.db);
  }

  close(): void {
    this.db.close();
  }
}
