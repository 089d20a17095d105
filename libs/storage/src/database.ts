/**
 * The SQLite file of a data dir (`engram.db`): opening it for the service or a rebuild (integrity
 * check, pragmas, schema), moving a corrupt one aside, reading it beside a running service, copying
 * it for a backup. The one place that opens a connection to a database (a lint rule keeps the
 * driver's value import here), the data dir's lock file included.
 */
import { existsSync, renameSync } from 'node:fs';
import Database from 'better-sqlite3-multiple-ciphers';
import type { Logger } from 'pino';
import { DatabaseMeta } from './database-meta.js';
import { SCHEMA_SQL, SCHEMA_VERSION } from './schema.js';

/** Opens an existing or new database file for writing; throws when it cannot be opened or fails quick_check. */
export function openDatabase(path: string, options: { readonly bulk?: boolean } = {}): Database.Database {
  const db = new Database(path);
  try {
    assertIntact(db, path);
    db.pragma('journal_mode = WAL');
    // The log is the durable record; the projection can be rebuilt, so it need not fsync each commit.
    db.pragma(options.bulk ? 'synchronous = OFF' : 'synchronous = NORMAL');
    if (options.bulk) db.pragma('cache_size = -65536');
    // Purged content must not linger in free pages.
    db.pragma('secure_delete = ON');
    db.exec(SCHEMA_SQL);
    const version = new DatabaseMeta(db).get('schema_version');
    if (version !== SCHEMA_VERSION) throw new Error(`schema version ${version}, expected ${SCHEMA_VERSION}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Opens the database; when it cannot be opened or fails its check, moves the file (and its WAL)
 * aside (`<path>.corrupt-<time>`, see moved-aside-databases.ts) and starts an empty one, which the
 * caller then fills from the log.
 */
export function openDatabaseOrMoveAside(path: string, logger: Logger): { readonly db: Database.Database; readonly movedAside: string | null } {
  try {
    return { db: openDatabase(path), movedAside: null };
  } catch (error) {
    const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
    }
    logger.error({ err: error, movedTo: aside }, 'database failed to open or its integrity check; moved it aside, rebuilding from the event log');
    return { db: openDatabase(path), movedAside: aside };
  }
}

/** A reader beside the running service (WAL lets readers in); it never writes. */
export function openReadOnlyDatabase(path: string): Database.Database {
  return new Database(path, { readonly: true, fileMustExist: true });
}

/** The last event applied in a database file that passes quick_check; throws when it does not. */
export function checkedLastSeq(path: string): number {
  const db = openReadOnlyDatabase(path);
  try {
    assertIntact(db, path);
    return new DatabaseMeta(db).get('last_seq');
  } finally {
    db.close();
  }
}

/** An online copy of the database into one self-contained file (no WAL); returns the copy's last applied seq. */
export async function copyDatabase(source: string, destination: string): Promise<number> {
  await copySqliteFile(source, destination);
  return checkedLastSeq(destination);
}

/** An online copy of any SQLite file of the data dir (engram.db, vectors.db) beside its writer, as one self-contained file. */
export async function copySqliteFile(source: string, destination: string): Promise<void> {
  const db = openReadOnlyDatabase(source);
  try {
    await db.backup(destination);
  } finally {
    db.close();
  }
  // The copy inherits WAL mode; one self-contained file is what a copy should be.
  const copy = new Database(destination, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

/** Moves the file's WAL into it, if it opens at all (a corrupt file's WAL is worthless anyway). */
export function foldWal(path: string): void {
  try {
    const db = new Database(path);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  } catch {
    // Nothing to keep.
  }
}

function assertIntact(db: Database.Database, path: string): void {
  const check = db.pragma('quick_check', { simple: true });
  if (check !== 'ok') throw new Error(`${path} fails SQLite's check: ${String(check)}`);
}

/** The data dir's lock file (see data-dir-lock.ts): never waits for a lock another process holds. */
export function openLockDatabase(path: string): Database.Database {
  return new Database(path, { timeout: 0 });
}
