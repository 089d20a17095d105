import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3-multiple-ciphers';
import { openLockDatabase } from '../database/database.js';
import { isOutOfSpace } from './out-of-space.js';

/** Another process (the memory service, or a CLI command that writes) holds the data dir. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

/**
 * One writer per data dir. The lock is an exclusive SQLite lock on a small file: the kernel drops it
 * when the holder dies, even by SIGKILL, so there is no stale lock to clean up, and SQLite also
 * refuses a second holder inside the same process.
 */
export class DataDirLock {
  private constructor(private readonly db: Database.Database) {}

  static acquire(lockPath: string): DataDirLock {
    mkdirSync(dirname(lockPath), { recursive: true });
    const db = openLockDatabase(lockPath);
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
      try {
        db.exec(
          `CREATE TABLE IF NOT EXISTS holder (pid INTEGER, since TEXT); DELETE FROM holder; INSERT INTO holder VALUES (${process.pid}, '${new Date().toISOString()}')`,
        );
        db.exec('COMMIT');
      } catch (error) {
        // The holder row only informs; on a full disk the lock is held without it (the service starts read-only).
        if (!isOutOfSpace(error)) throw error;
        if (db.inTransaction) db.exec('ROLLBACK');
      }
      // In exclusive locking mode the lock outlives the transaction; re-enter one to hold the write lock.
      db.exec('BEGIN EXCLUSIVE');
      return new DataDirLock(db);
    } catch (error) {
      db.close();
      // Read by shape, not `instanceof Error`: the SQLite driver's addon builds its errors from the classes of the
      // first realm that loaded it, and jest runs each spec file in a realm of its own.
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      if (/SQLITE_BUSY|database is locked/i.test(`${String(code)} ${String(message)}`)) {
        throw new DataDirLockedError(
          `the data dir ${dirname(lockPath)} is in use by another engram process (the memory service or a CLI command); stop it first`,
        );
      }
      throw error;
    }
  }

  release(): void {
    if (!this.db.open) return;
    this.db.exec('ROLLBACK');
    this.db.close();
  }
}
