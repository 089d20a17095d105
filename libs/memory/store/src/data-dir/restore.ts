import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { EncryptionKey } from '@engram/config';
import { checkLogCopy, MANIFEST_FILE, VECTORS_FILE, type BackupManifest } from './backup.js';
import { checkedLastSeq } from '../database/database.js';
import { DataDir } from './data-dir.js';
import { DataDirLock } from './data-dir-lock.js';
import { databaseKeyOf, ENCRYPTION_MARKER_FILE, EncryptionKeyError, readEncryptionMarker } from './data-dir-encryption.js';

export interface RestoreReport {
  readonly manifest: BackupManifest;
  /** Where the data dir's previous content was moved (null when it was empty): nothing is deleted. */
  readonly movedAside: string | null;
}

/** What a data dir holds besides its lock: moved aside as a whole, replaced as a whole. */
const DATA_ENTRIES = ['engram.db', 'engram.db-wal', 'engram.db-shm', 'events', 'pools', ENCRYPTION_MARKER_FILE];
/** Replaced only by a backup that has one; otherwise kept (keyed by content hash, its vectors fit any log and save endpoint calls). */
const VECTOR_ENTRIES = [VECTORS_FILE, `${VECTORS_FILE}-wal`, `${VECTORS_FILE}-shm`];

/**
 * Puts a backup in place of a data dir. Refuses while the memory service (or another CLI command)
 * holds the data dir, and checks the backup before touching anything. The previous content is
 * moved to `pre-restore-<time>/` inside the data dir. On its next start the memory service
 * catches the database up from the restored log. The backup's `vectors.db` replaces the data dir's;
 * a backup without one (made before backups had it) leaves the data dir's in place.
 * An encrypted backup needs its key; a plaintext backup is restored without a key (then `engram encrypt`).
 */
export async function restoreDataDir(
  backupPath: string,
  dataDirPath: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<RestoreReport> {
  const backup = resolve(backupPath);
  const key = options.encryptionKey ?? null;
  const manifestPath = join(backup, MANIFEST_FILE);
  if (!existsSync(manifestPath)) throw new Error(`${backup} is not an engram backup (no ${MANIFEST_FILE})`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as BackupManifest;
  assertKeyFitsBackup(backup, key);
  const logSeq = await checkLogCopy(backup, key, logger);
  if (logSeq !== manifest.logSeq) throw new Error(`the backup's log ends at seq ${logSeq}, its manifest says ${manifest.logSeq}`);
  if (existsSync(join(backup, 'engram.db')) && checkedLastSeq(join(backup, 'engram.db'), databaseKeyOf(backup, key)) > logSeq) {
    throw new Error(`the backup's database is ahead of its log (seq ${logSeq})`);
  }

  const dataDir = new DataDir(resolve(dataDirPath));
  mkdirSync(dataDir.root, { recursive: true });
  const lock = DataDirLock.acquire(dataDir.lockPath);
  try {
    const backupVectors = join(backup, VECTORS_FILE);
    const replaced = existsSync(backupVectors) ? [...DATA_ENTRIES, ...VECTOR_ENTRIES] : DATA_ENTRIES;
    const present = replaced.filter((entry) => existsSync(join(dataDir.root, entry)));
    let movedAside: string | null = null;
    if (present.length > 0) {
      movedAside = join(dataDir.root, `pre-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      mkdirSync(movedAside);
      for (const entry of present) renameSync(join(dataDir.root, entry), join(movedAside, entry));
    }
    // First: the restored files are encrypted (or not) as the marker says.
    if (existsSync(join(backup, ENCRYPTION_MARKER_FILE)))
      copyFileSync(join(backup, ENCRYPTION_MARKER_FILE), join(dataDir.root, ENCRYPTION_MARKER_FILE));
    copyTree(join(backup, 'events'), dataDir.eventsDir);
    if (existsSync(join(backup, 'pools'))) copyTree(join(backup, 'pools'), dataDir.poolsDir);
    if (existsSync(join(backup, 'engram.db'))) {
      copyFileSync(join(backup, 'engram.db'), `${dataDir.databasePath}.restore-tmp`);
      renameSync(`${dataDir.databasePath}.restore-tmp`, dataDir.databasePath);
    }
    if (existsSync(backupVectors)) {
      copyFileSync(backupVectors, `${dataDir.vectorsPath}.restore-tmp`);
      renameSync(`${dataDir.vectorsPath}.restore-tmp`, dataDir.vectorsPath);
    }
    return { manifest, movedAside };
  } finally {
    lock.release();
  }
}

function assertKeyFitsBackup(backup: string, key: EncryptionKey | null): void {
  const marker = readEncryptionMarker(backup);
  if (marker && !key)
    throw new EncryptionKeyError(
      `the backup ${backup} is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) to its key`,
    );
  if (marker && key && marker.keyId !== key.id) {
    throw new EncryptionKeyError(
      `the backup ${backup} is encrypted with another key than ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) holds`,
    );
  }
  if (!marker && key) {
    throw new EncryptionKeyError(
      `the backup ${backup} is not encrypted but ENGRAM_ENCRYPTION_KEY is set: restore it without the key, then run \`npx engram encrypt\``,
    );
  }
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) copyTree(join(from, entry.name), join(to, entry.name));
    else copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}
