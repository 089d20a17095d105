import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- moves into libs/storage with the storage split (issue 14, part 2)
import Database from 'better-sqlite3';
import { Command } from 'commander';
import { loadConfig } from '@engram/config';
import { createLogger } from '@engram/observability';
import { DataDir, EventLog } from '@engram/storage';

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
}

export const MANIFEST_FILE = 'backup.json';

/**
 * A consistent copy of a data dir while the memory service keeps running: the database through
 * SQLite's online backup on a read-only handle (WAL lets it read beside the writer), then the
 * log segments (append-only: a line torn by a concurrent append is cut from the copy, and every
 * line up to the copied seq is checked), then the flat files (each one rewritten atomically).
 * The database is copied first, so the log copy always reaches at least the database's seq.
 */
export async function backupDataDir(dataDirPath: string, target: string): Promise<BackupManifest> {
  const dataDir = new DataDir(resolve(dataDirPath));
  if (!existsSync(dataDir.root)) throw new Error(`no data dir at ${dataDir.root}`);
  if (existsSync(target) && readdirSync(target).length > 0) throw new Error(`${target} exists and is not empty`);
  const partial = `${resolve(target)}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });

  const databaseSeq = await copyDatabase(dataDir.databasePath, join(partial, 'engram.db'));

  const eventsCopy = join(partial, 'events');
  mkdirSync(eventsCopy);
  const segments = existsSync(dataDir.eventsDir)
    ? readdirSync(dataDir.eventsDir)
        .filter((name) => name.endsWith('.ndjson'))
        .sort()
    : [];
  for (const name of segments) writeFileSync(join(eventsCopy, name), readFileSync(join(dataDir.eventsDir, name)));
  const logSeq = await checkLogCopy(eventsCopy);
  if (logSeq < databaseSeq) {
    throw new Error(`the log copy ends at seq ${logSeq}, before the database's ${databaseSeq}: the log was changed during the backup`);
  }

  const pools = existsSync(dataDir.poolsDir) ? readdirSync(dataDir.poolsDir).sort() : [];
  for (const pool of pools) {
    const from = dataDir.poolDir(pool);
    if (!statSync(from).isDirectory()) continue;
    const to = join(partial, 'pools', pool);
    mkdirSync(to, { recursive: true });
    for (const file of readdirSync(from).filter((name) => name.endsWith('.md'))) copyFileSync(join(from, file), join(to, file));
  }

  const manifest: BackupManifest = { format: 1, createdAt: new Date().toISOString(), databaseSeq, logSeq, segments, pools };
  writeFileSync(join(partial, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  rmSync(target, { recursive: true, force: true });
  renameSync(partial, target);
  return manifest;
}

/** Online copy of the database; returns its last applied seq (0 when there is no database yet). */
async function copyDatabase(source: string, destination: string): Promise<number> {
  if (!existsSync(source)) return 0;
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    await db.backup(destination);
  } finally {
    db.close();
  }
  // The copy inherits WAL mode; one self-contained file is what a backup should be.
  const copy = new Database(destination, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
  return databaseSeqOf(destination);
}

export function databaseSeqOf(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const problem = db.pragma('quick_check', { simple: true });
    if (problem !== 'ok') throw new Error(`${path} fails SQLite's check: ${String(problem)}`);
    const row = db.prepare<[], { value: number }>("SELECT value FROM meta WHERE key = 'last_seq'").get();
    return row?.value ?? 0;
  } finally {
    db.close();
  }
}

/**
 * Checks every line of a copied log (checksum, gap-free seqs from 1) with the log's own reader and
 * returns the last seq. A bad final line is an append caught mid-write and is cut from the copy;
 * a bad line anywhere else is damage and an error.
 */
export async function checkLogCopy(dir: string): Promise<number> {
  const log = await EventLog.open({ dir, logger: createLogger('engram-cli', 'silent') });
  const lastSeq = log.lastSeq;
  await log.close();
  return lastSeq;
}

/** `engram backup --to DIR [--data-dir D]` */
export function backupCommand(): Command {
  return new Command('backup')
    .description('copy the database, the event log and the flat files while the memory service runs')
    .requiredOption('--to <dir>', 'new or empty folder for the backup')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { to: string; dataDir?: string }) => {
      const dataDir = options.dataDir ?? loadConfig(process.env).dataDir;
      const manifest = await backupDataDir(dataDir, options.to);
      process.stdout.write(
        `backed up ${dataDir} to ${options.to}: database at seq ${manifest.databaseSeq}, log to seq ${manifest.logSeq} ` +
          `(${manifest.segments.length} segments), ${manifest.pools.length} pools\n`,
      );
    });
}
