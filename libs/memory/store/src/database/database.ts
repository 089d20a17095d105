/**
 * The SQLite file of a data dir (`engram.db`): opening it for the service or a rebuild (integrity
 * check, pragmas, schema), moving a corrupt one aside, reading it beside a running service, copying
 * it for a backup. The one place that opens a connection to a database (a lint rule keeps the
 * driver's value import here), the data dir's lock file included.
 *
 * With an at-rest key every file but the lock has its pages encrypted with the raw key, by the cipher the
 * data dir records (page-cipher.ts). Pages are decrypted when read into SQLite's page cache, so the cache
 * of a keyed connection is larger: a search then reads the pages it needs from memory rather than
 * decrypting them again.
 */
import { existsSync, renameSync } from 'node:fs';
import Database from 'better-sqlite3-multiple-ciphers';
import type { Logger } from 'pino';
import { DatabaseMeta } from './database-meta.js';
import { cipherPragmas, type AtRestKey } from './page-cipher.js';
import { isOutOfSpace } from '../data-dir/out-of-space.js';
import { SCHEMA_SQL, SCHEMA_VERSION } from './schema.js';

/** Pages a keyed connection keeps decrypted (KiB, as a negative cache_size): SQLite's default is 2 MiB. */
const KEYED_CACHE_KIB = 64 * 1024;

export interface DatabaseOptions {
  /** Fewer fsyncs and a larger cache, for a file that is fsync'd and verified before it is used (replay). */
  readonly bulk?: boolean;
  /** The at-rest key of an encrypted data dir. */
  readonly key?: AtRestKey;
}

/** Opens an existing or new database file for writing; throws when it cannot be opened or fails quick_check. */
export function openDatabase(path: string, options: DatabaseOptions = {}): Database.Database {
  return openConnection(path, options, 'normal');
}

/**
 * A connection opened on a full disk (exclusive locking mode, its WAL index in memory) locks every other
 * connection out (a backup beside the service, the WAL checkpointer's thread): once there is room, this
 * makes it an ordinary WAL connection again. SQLite lets the locking mode go back to normal only outside
 * WAL mode, so the WAL is folded in first, then entered again with an index file. Throws while there is
 * no room; calling it again finishes what a failed call left.
 */
export function shareDatabase(db: Database.Database): void {
  if (db.pragma('locking_mode', { simple: true }) === 'exclusive') {
    db.pragma('journal_mode = DELETE');
    db.pragma('locking_mode = NORMAL');
  }
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
}

function openConnection(path: string, options: DatabaseOptions, locking: 'normal' | 'exclusive'): Database.Database {
  const db = new Database(path);
  try {
    if (locking === 'exclusive') db.pragma('locking_mode = EXCLUSIVE');
    keyConnection(db, options.key ?? null);
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
 * caller then fills from the log. On a full disk the file stays where it is and opens with its WAL
 * index in memory (see shareDatabase); `fullDisk` then says why.
 */
export function openDatabaseOrMoveAside(
  path: string,
  key: AtRestKey,
  logger: Logger,
): { readonly db: Database.Database; readonly movedAside: string | null; readonly fullDisk: Error | null } {
  try {
    return { db: openDatabase(path, { key }), movedAside: null, fullDisk: null };
  } catch (error) {
    if (isOutOfSpace(error)) {
      // A WAL database needs its index file (-shm, 32 KiB) sized before the first read, and a clean shutdown
      // removed it: on a full disk SQLite cannot. In exclusive locking mode the index lives in memory.
      return { db: openConnection(path, { key }, 'exclusive'), movedAside: null, fullDisk: error as Error };
    }
    const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
    }
    logger.error({ err: error, movedTo: aside }, 'database failed to open or its integrity check; moved it aside, rebuilding from the event log');
    return { db: openDatabase(path, { key }), movedAside: aside, fullDisk: null };
  }
}

/** A reader beside the running service (WAL lets readers in); it never writes. */
export function openReadOnlyDatabase(path: string, key: AtRestKey): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    keyConnection(db, key);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Attaches another file of the data dir (vectors.db) to a connection under `schema`, keyed like the
 * connection's own file, with the same page cache.
 */
export function attachDatabase(db: Database.Database, path: string, schema: string, key: AtRestKey): void {
  if (!/^[a-z_]+$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  if (key) {
    // The connection's cipher pragmas (keyPragmas) are the defaults ATTACH keys with.
    db.prepare(`ATTACH DATABASE ? AS ${schema} KEY ?`).run(path, key.key.sqlcipherKey);
    db.pragma(`${schema}.cache_size = -${KEYED_CACHE_KIB}`);
  } else {
    db.prepare(`ATTACH DATABASE ? AS ${schema}`).run(path);
  }
}

/** The last event applied in a database file that passes quick_check; throws when it does not. */
export function checkedLastSeq(path: string, key: AtRestKey): number {
  const db = openReadOnlyDatabase(path, key);
  try {
    assertIntact(db, path);
    return new DatabaseMeta(db).get('last_seq');
  } finally {
    db.close();
  }
}

/** An online copy of the database into one self-contained file (no WAL); returns the copy's last applied seq. */
export function copyDatabase(source: string, destination: string, key: AtRestKey): number {
  copySqliteFile(source, destination, key);
  return checkedLastSeq(destination, key);
}

/**
 * An online copy of any SQLite file of the data dir (engram.db, vectors.db) beside its writer, as one
 * self-contained file (rollback journal, no WAL): one read transaction, so a consistent snapshot.
 * A keyed file's copy is keyed the same (SQLite's backup API refuses to copy between a keyed file
 * and a new one, and would write the pages in the clear if it did not).
 */
export function copySqliteFile(source: string, destination: string, key: AtRestKey): void {
  const db = openReadOnlyDatabase(source, key);
  try {
    db.prepare('VACUUM INTO ?').run(destination);
  } finally {
    db.close();
  }
}

/**
 * A copy of a database file keyed with another key or cipher, or none (`engram encrypt`, `decrypt`,
 * `rekey`): a self-contained copy under the source's key, then a rekey of the copy, which rewrites
 * every page. The source is only read.
 */
export function convertDatabaseFile(source: string, destination: string, from: AtRestKey, to: AtRestKey): void {
  copySqliteFile(source, destination, from);
  const db = new Database(destination, { fileMustExist: true });
  try {
    keyConnection(db, from);
    if (to) for (const pragma of cipherPragmas(to.cipher)) db.pragma(pragma);
    db.pragma(to ? `rekey = "${to.key.sqlcipherKey}"` : `rekey = ''`);
    assertIntact(db, destination);
  } finally {
    db.close();
  }
}

/** Moves the file's WAL into it, if it opens at all (a corrupt file's WAL is worthless anyway). */
export function foldWal(path: string, key: AtRestKey): void {
  try {
    const db = new Database(path);
    keyConnection(db, key);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  } catch {
    // Nothing to keep.
  }
}

/**
 * Keys a new connection (before its first read): the data dir's cipher, the raw key. A wrong key shows
 * at the first read as SQLITE_NOTADB, like a file that is not a database at all; the data dir's
 * encryption marker (data-dir-encryption.ts) tells the two apart before any file is opened.
 */
function keyConnection(db: Database.Database, key: AtRestKey): void {
  for (const pragma of keyPragmas(key)) db.pragma(pragma);
}

/** The pragmas that key a connection, in order (a worker thread's connection runs them too); none without a key. */
export function keyPragmas(key: AtRestKey): string[] {
  if (!key) return [];
  return [...cipherPragmas(key.cipher), `key = "${key.key.sqlcipherKey}"`, `cache_size = -${KEYED_CACHE_KIB}`];
}

function assertIntact(db: Database.Database, path: string): void {
  const check = db.pragma('quick_check', { simple: true });
  if (check !== 'ok') throw new Error(`${path} fails SQLite's check: ${String(check)}`);
}

/** The data dir's lock file (see data-dir-lock.ts): never waits for a lock another process holds. */
export function openLockDatabase(path: string): Database.Database {
  return new Database(path, { timeout: 0 });
}
