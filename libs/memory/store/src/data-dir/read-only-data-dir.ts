import { existsSync } from 'node:fs';
import type Database from 'better-sqlite3-multiple-ciphers';
import type { EncryptionKey } from '@engram/config';
import type { MemoryEntry } from '@engram/domain';
import { DataDir } from './data-dir.js';
import { assertKeyFitsDataDir, databaseKeyOf } from './data-dir-encryption.js';
import { openReadOnlyDatabase } from '../database/database.js';
import { DatabaseMeta } from '../database/database-meta.js';
import { MemoryQueries } from '../projection/memory-queries.js';
import { readPoolStats, type PoolStats } from '../projection/pool-stats.js';
import { validPool } from '../writes/validation.js';

/**
 * Read-only access to a data dir's database for `engram export` and `engram stats`: no lock, so it
 * works while the memory service runs (WAL lets readers in), and it never writes.
 */
export class ReadOnlyDataDir {
  private readonly queries: MemoryQueries;

  private constructor(private readonly db: Database.Database) {
    this.queries = new MemoryQueries(db);
  }

  static open(root: string, key: EncryptionKey | null): ReadOnlyDataDir {
    const path = new DataDir(root).databasePath;
    assertKeyFitsDataDir(root, key);
    if (!existsSync(path)) throw new Error(`no database at ${path}; start the memory service or run \`engram replay\` first`);
    return new ReadOnlyDataDir(openReadOnlyDatabase(path, databaseKeyOf(root, key)));
  }

  /** Every entry of a pool, archived ones too, oldest first. */
  entries(pool: string): MemoryEntry[] {
    return this.queries.entriesOfPool(validPool(pool));
  }

  lastSeq(): number {
    return new DatabaseMeta(this.db).get('last_seq');
  }

  /** Counts of the pools that have entries. */
  stats(): PoolStats[] {
    return readPoolStats(this.db);
  }

  close(): void {
    this.db.close();
  }
}
