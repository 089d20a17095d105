import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { EncryptionKey } from '@engram/config';
import { copyDatabase, copySqliteFile } from '../database/database.js';
import { DataDir } from './data-dir.js';
import { assertKeyFitsDataDir, databaseKeyOf, ENCRYPTION_MARKER_FILE, eventCodecOf } from './data-dir-encryption.js';
import { EventLog } from '../event-log/event-log.js';

/** What a backup folder holds, written last as `backup.json`: a folder without it is not a backup. */
export interface BackupManifest {
  readonly format: 1;
  readonly createdAt: string;
  /** Last event applied in the copied database (0 when there was no database yet). */
  readonly databaseSeq: number;
  /** Last event in the copied log; never below databaseSeq, so a restore catches up, never back. */
  readonly logSeq: number;
  readonly segments: readonly string[];
  readonly pools: readonly string[];
  /** Whether `vectors.db` (hybrid search's embeddings) was copied: absent in backups made before it was. */
  readonly vectors?: boolean;
}

export const MANIFEST_FILE = 'backup.json';
export const VECTORS_FILE = 'vectors.db';

/**
 * A consistent copy of a data dir while the memory service keeps running: the database through
 * SQLite's online backup on a read-only handle (WAL lets it read beside the writer), then the
 * log segments (append-only: a line torn by a concurrent append is cut from the copy, and every
 * line up to the copied seq is checked), then the flat files (each one rewritten atomically).
 * The database is copied first, so the log copy always reaches at least the database's seq.
 * `vectors.db` is copied too (keyed by content hash, it fits any log): a restore then searches by
 * meaning at once, without sending every text to the embeddings endpoint again.
 * An encrypted data dir's backup is encrypted with the same key (and holds its marker): restoring it needs the key.
 */
export async function backupDataDir(
  dataDirPath: string,
  target: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<BackupManifest> {
  const dataDir = new DataDir(resolve(dataDirPath));
  const key = options.encryptionKey ?? null;
  if (!existsSync(dataDir.root)) throw new Error(`no data dir at ${dataDir.root}`);
  assertKeyFitsDataDir(dataDir.root, key);
  if (existsSync(target) && readdirSync(target).length > 0) throw new Error(`${target} exists and is not empty`);
  const partial = `${resolve(target)}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });

  const marker = join(dataDir.root, ENCRYPTION_MARKER_FILE);
  if (existsSync(marker)) copyFileSync(marker, join(partial, ENCRYPTION_MARKER_FILE));
  const databaseSeq = existsSync(dataDir.databasePath)
    ? copyDatabase(dataDir.databasePath, join(partial, 'engram.db'), databaseKeyOf(dataDir.root, key))
    : 0;

  const eventsCopy = join(partial, 'events');
  mkdirSync(eventsCopy);
  const segments = existsSync(dataDir.eventsDir)
    ? readdirSync(dataDir.eventsDir)
        .filter((name) => name.endsWith('.ndjson'))
        .sort()
    : [];
  for (const name of segments) writeFileSync(join(eventsCopy, name), readFileSync(join(dataDir.eventsDir, name)));
  const logSeq = await checkLogCopy(partial, key, logger);
  if (logSeq < databaseSeq) {
    throw new Error(`the log copy ends at seq ${logSeq}, before the database's ${databaseSeq}: the log was changed during the backup`);
  }

  const vectors = existsSync(dataDir.vectorsPath);
  if (vectors) copySqliteFile(dataDir.vectorsPath, join(partial, VECTORS_FILE), databaseKeyOf(dataDir.root, key));

  const pools = existsSync(dataDir.poolsDir) ? readdirSync(dataDir.poolsDir).sort() : [];
  for (const pool of pools) {
    const from = dataDir.poolDir(pool);
    if (!statSync(from).isDirectory()) continue;
    const to = join(partial, 'pools', pool);
    mkdirSync(to, { recursive: true });
    for (const file of readdirSync(from).filter((name) => name.endsWith('.md'))) copyFileSync(join(from, file), join(to, file));
  }

  const manifest: BackupManifest = { format: 1, createdAt: new Date().toISOString(), databaseSeq, logSeq, segments, pools, vectors };
  writeFileSync(join(partial, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  rmSync(target, { recursive: true, force: true });
  renameSync(partial, target);
  return manifest;
}

/**
 * Checks every line of a copied log (checksum, gap-free seqs from 1, sealed as the copy's marker says)
 * with the log's own reader and returns the last seq. A bad final line is an append caught mid-write
 * and is cut from the copy; a bad line anywhere else is damage and an error. `root` holds `events/`.
 */
export async function checkLogCopy(root: string, key: EncryptionKey | null, logger: Logger): Promise<number> {
  const log = await EventLog.open({ dir: join(root, 'events'), logger, codec: eventCodecOf(root, key) });
  const lastSeq = log.lastSeq;
  await log.close();
  return lastSeq;
}
