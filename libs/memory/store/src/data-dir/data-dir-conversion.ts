import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type EncryptionKey, openFile, sealFile } from '@engram/config';
import { INTERNAL_TOKEN_FILE } from '@engram/contracts';
import { convertDatabaseFile } from '../database/database.js';
import { DataDir } from './data-dir.js';
import {
  CONVERSION_JOURNAL_FILE,
  databaseKeyOf,
  ENCRYPTION_MARKER_FILE,
  EncryptionKeyError,
  eventCodecOf,
  isCurrentFormat,
  readEncryptionMarker,
  writeEncryptionMarker,
  type ConversionJournal,
} from './data-dir-encryption.js';
import { DataDirLock } from './data-dir-lock.js';
import type { EventCodec } from '../event-log/event-codec.js';
import { decodeEventLine, encodeEventLine, openStored } from '../event-log/event-line.js';
import { SEGMENT_PATTERN } from '../event-log/event-segment.js';
import { fsyncPath } from '../event-log/fsync.js';
import { verifyHeldDataDir } from './rebuild.js';

/** Which command converts: the key the data dir has, and the key (or none) it gets. */
export type Conversion =
  | { readonly command: 'encrypt'; readonly to: EncryptionKey }
  | { readonly command: 'decrypt'; readonly from: EncryptionKey }
  | { readonly command: 'rekey'; readonly from: EncryptionKey; readonly to: EncryptionKey };

export interface ConversionResult {
  readonly lastSeq: number;
  readonly memories: number;
  /** Whether this run finished a run that had been interrupted. */
  readonly resumed: boolean;
  /** The data dir was as asked already (a run killed after it finished, run again): checked, nothing changed. */
  readonly alreadyDone: boolean;
  /** Folders of the data dir with earlier content (`pre-restore-*`, `*.corrupt-*`) that stay as they were. */
  readonly untouched: readonly string[];
}

/** The converted copy is written here, inside the data dir (one file system: the swap is renames). */
const NEW_DIR = 'convert-new';
/** What the copy replaced, kept until the swapped-in data dir passes verify. */
const OLD_DIR = 'convert-old';
/** What a data dir holds that a conversion rewrites; its lock stays, and so do earlier copies (`pre-restore-*`). */
const CONVERTED = ['engram.db', 'vectors.db', 'events', 'pools', 'spool', INTERNAL_TOKEN_FILE, ENCRYPTION_MARKER_FILE];
/** Beside the databases: never valid against the copies, moved out with the old files. */
const STALE = ['engram.db-wal', 'engram.db-shm', 'vectors.db-wal', 'vectors.db-shm'];

/**
 * `engram encrypt`, `decrypt` and `rekey`, with the memory service stopped (the data dir's lock is held
 * throughout): a converted copy of everything that holds memory is written into `convert-new/` and
 * verified (database == replay(log), every sealed file opens), then swapped in by renames, the old files
 * going to `convert-old/`; the swapped-in data dir is verified again, and only then is `convert-old/`
 * removed. A journal (`convert.json`) says how far it got: killed at any point, the same command run again
 * finishes it (a copy half written is written again; a swap half done is completed), and meanwhile the
 * services refuse to start on the data dir.
 */
export async function convertDataDir(root: string, conversion: Conversion, logger: Logger): Promise<ConversionResult> {
  const dataDir = new DataDir(root);
  if (!existsSync(root)) throw new Error(`no data dir at ${root}`);
  const to = 'to' in conversion ? conversion.to : null;
  const lock = DataDirLock.acquire(dataDir.lockPath);
  try {
    const journalPath = join(root, CONVERSION_JOURNAL_FILE);
    let journal = existsSync(journalPath) ? (JSON.parse(readFileSync(journalPath, 'utf8')) as ConversionJournal) : null;
    const resumed = journal !== null;
    // `encrypt` of a data dir encrypted with this key in an older format (its log clear, or its pages in an older
    // cipher): from the key to the key, sealing the log and rewriting the pages in the current cipher.
    const sameKey = conversion.command === 'encrypt' && (journal ? journal.from !== null : isEncryptedInOlderFormat(root, conversion.to));
    const from = 'from' in conversion ? conversion.from : sameKey ? to : null;
    const wanted: ConversionJournal = { command: conversion.command, from: from?.id ?? null, to: to?.id ?? null, step: 'copying' };
    if (journal && (journal.command !== wanted.command || journal.from !== wanted.from || journal.to !== wanted.to)) {
      throw new EncryptionKeyError(
        `an interrupted \`engram ${journal.command}\` of ${root} is not finished: run \`npx engram ${journal.command}\` again with the same key(s)`,
      );
    }
    if (!journal && isDone(root, conversion)) {
      const result = await verifyHeldDataDir(root, logger, { encryptionKey: to });
      if (!result.ok) throw new Error(`the data dir fails verify: ${result.problems.join('; ')}`);
      return { lastSeq: result.lastSeq, memories: result.memories, resumed: false, alreadyDone: true, untouched: earlierCopies(root) };
    }
    if (!journal) {
      assertSource(root, conversion);
      // Only a data dir that passes verify is converted (the copy is checked against the same fold).
      const source = await verifyHeldDataDir(root, logger, { encryptionKey: from });
      if (!source.ok) {
        throw new Error(
          `the data dir ${root} fails verify, nothing was changed: ${source.problems.join('; ')}. ` +
            'Start the memory service once and stop it (it catches the database up and cuts a torn last line), or see ops/RECOVERY.md; then run this again',
        );
      }
      journal = wanted;
      writeJournal(root, journal);
    }
    if (journal.step === 'copying') {
      rmSync(join(root, NEW_DIR), { recursive: true, force: true });
      try {
        await writeConvertedCopy(root, join(root, NEW_DIR), from, to, logger);
      } catch (error) {
        // Nothing of the data dir was touched yet: leave it as it was, usable by the services.
        rmSync(join(root, NEW_DIR), { recursive: true, force: true });
        rmSync(journalPath, { force: true });
        throw error;
      }
      journal = { ...journal, step: 'swapping', copied: readdirSync(join(root, NEW_DIR)) };
      writeJournal(root, journal);
    }
    if (journal.step === 'swapping') {
      swap(root, journal.copied ?? []);
      journal = { ...journal, step: 'swapped' };
      writeJournal(root, journal);
    }
    const result = await verifyHeldDataDir(root, logger, { encryptionKey: to });
    if (!result.ok)
      throw new Error(`the converted data dir fails verify (the previous files are in ${join(root, OLD_DIR)}): ${result.problems.join('; ')}`);
    openEverySealedFile(root, to);
    rmSync(join(root, OLD_DIR), { recursive: true, force: true });
    rmSync(journalPath, { force: true });
    fsyncPath(root);
    logger.info({ command: conversion.command, lastSeq: result.lastSeq, memories: result.memories, resumed }, 'converted the data dir');
    return { lastSeq: result.lastSeq, memories: result.memories, resumed, alreadyDone: false, untouched: earlierCopies(root) };
  } finally {
    lock.release();
  }
}

/** The data dir is as the command leaves it: run again after it finished, it has nothing to do. */
function isDone(root: string, conversion: Conversion): boolean {
  const marker = readEncryptionMarker(root);
  return conversion.command === 'decrypt' ? marker === null : marker?.keyId === conversion.to.id && isCurrentFormat(root);
}

function isEncryptedInOlderFormat(root: string, key: EncryptionKey): boolean {
  return readEncryptionMarker(root)?.keyId === key.id && !isCurrentFormat(root);
}

function assertSource(root: string, conversion: Conversion): void {
  const marker = readEncryptionMarker(root);
  if (conversion.command === 'encrypt') {
    if (marker && !isEncryptedInOlderFormat(root, conversion.to))
      throw new EncryptionKeyError(`the data dir ${root} is encrypted with another key already: \`npx engram rekey\` changes its key`);
    return;
  }
  if (!marker) throw new EncryptionKeyError(`the data dir ${root} is not encrypted`);
  if (marker.keyId !== conversion.from.id) {
    throw new EncryptionKeyError(
      `the data dir ${root} is encrypted with another key than ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) holds`,
    );
  }
  if (conversion.command === 'rekey' && conversion.to.id === conversion.from.id)
    throw new EncryptionKeyError('the new key is the key the data dir has');
}

/** Every file that holds memory, converted into `target`, then checked there as the swapped-in data dir will be. */
async function writeConvertedCopy(root: string, target: string, from: EncryptionKey | null, to: EncryptionKey | null, logger: Logger): Promise<void> {
  mkdirSync(target);
  // First, so that the copy is never taken for a plaintext data dir.
  if (to) writeEncryptionMarker(target, to);
  for (const database of ['engram.db', 'vectors.db']) {
    if (existsSync(join(root, database))) {
      convertDatabaseFile(join(root, database), join(target, database), databaseKeyOf(root, from), databaseKeyOf(target, to));
    }
  }
  if (existsSync(join(root, 'events'))) {
    mkdirSync(join(target, 'events'));
    const source = eventCodecOf(root, from);
    const converted = eventCodecOf(target, to);
    for (const name of readdirSync(join(root, 'events')).filter((file) => SEGMENT_PATTERN.test(file))) {
      convertSegment(join(root, 'events', name), join(target, 'events', name), source, converted);
    }
  }
  for (const place of sealedFiles(root)) {
    const content = openFile(readFileSync(join(root, place)), from, place);
    mkdirSync(join(target, place, '..'), { recursive: true });
    writeFileSync(join(target, place), sealFile(content, to, place), { mode: statSync(join(root, place)).mode & 0o777 });
  }
  syncTree(target);
  const check = await verifyHeldDataDir(target, logger, { encryptionKey: to });
  // verify took the copy's own lock file: not part of what is swapped in.
  rmSync(join(target, 'engram.lock'), { force: true });
  if (!check.ok) throw new Error(`the converted copy fails verify: ${check.problems.join('; ')}`);
  openEverySealedFile(target, to);
}

/**
 * A segment's lines opened with the source's codec and stored with the copy's (sealed again under a
 * fresh nonce, or clear): same events, same seqs, same segment. The source passed verify, so every
 * line is whole; one that does not open stops the conversion.
 */
function convertSegment(from: string, to: string, source: EventCodec, target: EventCodec): void {
  const lines = readFileSync(from, 'utf8').split('\n');
  const out: string[] = [];
  lines.forEach((line, index) => {
    if (line === '') return;
    const decoded = decodeEventLine(line);
    const opened = decoded.ok ? openStored(decoded.stored, source) : decoded;
    if (!opened.ok) throw new Error(`event log segment ${from}, line ${index + 1}: ${opened.reason}`);
    out.push(encodeEventLine(target.toStored(opened.event)));
  });
  writeFileSync(to, out.join(''));
}

/** The files Engram seals with a key (by their place in the data dir): flat files, spooled exchanges, the internal token. */
function sealedFiles(root: string): string[] {
  const places: string[] = [];
  if (existsSync(join(root, 'pools'))) {
    for (const pool of readdirSync(join(root, 'pools'))) {
      if (!statSync(join(root, 'pools', pool)).isDirectory()) continue;
      for (const file of readdirSync(join(root, 'pools', pool)).filter((name) => name.endsWith('.md'))) places.push(`pools/${pool}/${file}`);
    }
  }
  if (existsSync(join(root, 'spool', 'extract'))) {
    for (const file of readdirSync(join(root, 'spool', 'extract')).filter((name) => name.endsWith('.json'))) places.push(`spool/extract/${file}`);
  }
  if (existsSync(join(root, INTERNAL_TOKEN_FILE))) places.push(INTERNAL_TOKEN_FILE);
  return places;
}

function openEverySealedFile(root: string, key: EncryptionKey | null): void {
  for (const place of sealedFiles(root)) openFile(readFileSync(join(root, place)), key, place);
}

/**
 * Old files out to `convert-old/`, then the copy's in, each a rename. Run again after a crash it picks
 * up where it stopped: an entry of the copy still in `convert-new/` is not in yet (its old one may or
 * may not be out already); an entry the copy does not have (the marker, after decrypt) only goes out.
 */
function swap(root: string, copied: readonly string[]): void {
  const fresh = join(root, NEW_DIR);
  const old = join(root, OLD_DIR);
  mkdirSync(old, { recursive: true });
  const moveOut = (entry: string) => {
    if (existsSync(join(root, entry))) renameSync(join(root, entry), join(old, entry));
  };
  // A WAL beside the old file would be applied to the new one.
  for (const entry of STALE) moveOut(entry);
  for (const entry of CONVERTED) {
    if (!copied.includes(entry)) {
      moveOut(entry);
    } else if (existsSync(join(fresh, entry))) {
      moveOut(entry);
      renameSync(join(fresh, entry), join(root, entry));
    }
  }
  fsyncPath(old);
  fsyncPath(root);
  rmSync(fresh, { recursive: true, force: true });
}

function writeJournal(root: string, journal: ConversionJournal): void {
  const path = join(root, CONVERSION_JOURNAL_FILE);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(journal)}\n`);
  fsyncPath(`${path}.tmp`);
  renameSync(`${path}.tmp`, path);
  fsyncPath(root);
}

function syncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) syncTree(path);
    else fsyncPath(path);
  }
  fsyncPath(dir);
}

function earlierCopies(root: string): string[] {
  return readdirSync(root).filter((name) => name.startsWith('pre-restore-') || name.includes('.corrupt-'));
}
