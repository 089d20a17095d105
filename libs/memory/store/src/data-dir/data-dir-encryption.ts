import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EncryptionKey } from '@engram/config';
import { DataDir } from './data-dir.js';
import { CURRENT_PAGE_CIPHER, PAGE_CIPHERS, type AtRestKey, type PageCipher } from '../database/page-cipher.js';
import { plainEventCodec, sealedEventCodec, type EventCodec } from '../event-log/event-codec.js';
import { fsyncPath } from '../event-log/fsync.js';

/** The marker of an encrypted data dir, at its root: the key's fingerprint, never the key. */
export const ENCRYPTION_MARKER_FILE = 'encryption.json';

export interface EncryptionMarker {
  readonly format: 1;
  /** EncryptionKey.id of the key the data dir is encrypted with. */
  readonly keyId: string;
  /** How the pages of its SQLite files are encrypted with the raw key (page-cipher.ts). */
  readonly databases: PageCipher;
  /**
   * How the event log stores each event: its data sealed (sealedEventCodec). Absent in a data dir
   * encrypted before the log was sealed: its lines are clear, and `engram encrypt` seals them.
   */
  readonly events?: typeof SEALED_EVENTS;
}

const SEALED_EVENTS = 'sealed-aes-256-gcm';

/** The journal of `engram encrypt` / `decrypt` / `rekey` while one runs or after one was interrupted (data-dir-conversion.ts). */
export const CONVERSION_JOURNAL_FILE = 'convert.json';

export interface ConversionJournal {
  readonly command: 'encrypt' | 'decrypt' | 'rekey';
  /** Key ids (EncryptionKey.id), null for plaintext. */
  readonly from: string | null;
  readonly to: string | null;
  /** copying: `convert-new/` is being written; swapping: it is verified and being moved in; swapped: in, not yet verified there. */
  readonly step: 'copying' | 'swapping' | 'swapped';
  /** What `convert-new/` holds, once written. */
  readonly copied?: readonly string[];
}

/** The data dir and the configured key do not go together: refused before any file is touched. */
export class EncryptionKeyError extends Error {
  override name = 'EncryptionKeyError';
}

/** The files that make a data dir hold memory (its lock, the token and an empty events folder do not). */
const DATA_FILES = ['engram.db', 'engram.db-wal', 'vectors.db', 'vectors.db-wal'];

/** The marker of an encrypted data dir; null for a plaintext (or new) one. */
export function readEncryptionMarker(root: string): EncryptionMarker | null {
  const path = join(root, ENCRYPTION_MARKER_FILE);
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8')) as EncryptionMarker;
}

/**
 * Checks the configured key against the data dir, reading only: an encrypted data dir needs its own
 * key; a plaintext data dir that holds memory is not written to with a key (it would be half
 * encrypted), `engram encrypt` converts it. A new or empty data dir takes either.
 */
export function assertKeyFitsDataDir(root: string, key: EncryptionKey | null): void {
  const journal = join(root, CONVERSION_JOURNAL_FILE);
  if (existsSync(journal)) {
    const { command } = JSON.parse(readFileSync(journal, 'utf8')) as ConversionJournal;
    throw new EncryptionKeyError(
      `an \`engram ${command}\` of the data dir ${root} was interrupted: run \`npx engram ${command}\` again to finish it`,
    );
  }
  const marker = readEncryptionMarker(root);
  if (marker && !key) {
    throw new EncryptionKeyError(
      `the data dir ${root} is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) to its key`,
    );
  }
  if (marker && key && marker.keyId !== key.id) {
    throw new EncryptionKeyError(
      `the data dir ${root} is encrypted with another key than ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) holds`,
    );
  }
  if (marker && !PAGE_CIPHERS.includes(marker.databases)) {
    throw new EncryptionKeyError(
      `the data dir ${root} is encrypted in a way this Engram does not know (pages: ${String(marker.databases)}): run the Engram that encrypted it`,
    );
  }
  if (marker && marker.events !== SEALED_EVENTS && holdsEvents(root)) {
    throw new EncryptionKeyError(
      `the data dir ${root} was encrypted before Engram sealed its event log, which is still clear: stop the services and run \`npx engram encrypt\` with the same key to seal it`,
    );
  }
  if (!marker && key && holdsMemory(root)) {
    throw new EncryptionKeyError(
      `the data dir ${root} is not encrypted but ENGRAM_ENCRYPTION_KEY is set: stop the services and run \`npx engram encrypt\` to encrypt it with the key, or unset the key`,
    );
  }
}

/** With a key, marks a data dir that holds no memory yet (or no event yet) as encrypted (durably, before any encrypted file is written). */
export function markEncryptedIfNew(root: string, key: EncryptionKey | null): void {
  if (!key || sealsEvents(root)) return;
  // A marker from before the log was sealed, on a data dir with no event yet: its first event is sealed.
  const marker = readEncryptionMarker(root);
  if (marker && holdsEvents(root)) return;
  // Its databases, if any, stay keyed as they are.
  writeEncryptionMarker(root, key, marker?.databases);
}

export function writeEncryptionMarker(root: string, key: EncryptionKey, databases: PageCipher = CURRENT_PAGE_CIPHER): void {
  const marker: EncryptionMarker = { format: 1, keyId: key.id, databases, events: SEALED_EVENTS };
  const path = join(root, ENCRYPTION_MARKER_FILE);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(marker, null, 2)}\n`);
  fsyncPath(`${path}.tmp`);
  renameSync(`${path}.tmp`, path);
  fsyncPath(root);
}

/** Whether the data dir (or backup) at `root` is encrypted with every part sealed, the event log included. */
export function sealsEvents(root: string): boolean {
  return readEncryptionMarker(root)?.events === SEALED_EVENTS;
}

/**
 * How the event log of the data dir (or backup) at `root` stores its events: sealed with the key when
 * its marker says so, else clear. Callers check the key against the data dir first (assertKeyFitsDataDir).
 */
export function eventCodecOf(root: string, key: EncryptionKey | null): EventCodec {
  return key && sealsEvents(root) ? sealedEventCodec(key) : plainEventCodec;
}

/**
 * How the SQLite files of the data dir (or backup) at `root` are keyed: its marker's cipher; a data dir
 * that has none yet gets the current one. Callers check the key against the data dir first.
 */
export function databaseKeyOf(root: string, key: EncryptionKey | null): AtRestKey {
  return key ? { key, cipher: readEncryptionMarker(root)?.databases ?? CURRENT_PAGE_CIPHER } : null;
}

/** Whether an encrypted data dir is in the format `engram encrypt` writes: its log sealed, its pages in the current cipher. */
export function isCurrentFormat(root: string): boolean {
  return sealsEvents(root) && readEncryptionMarker(root)?.databases === CURRENT_PAGE_CIPHER;
}

function holdsMemory(root: string): boolean {
  if (DATA_FILES.some((file) => existsSync(join(root, file)))) return true;
  if (holdsEvents(root)) return true;
  const dataDir = new DataDir(root);
  return existsSync(dataDir.poolsDir) && readdirSync(dataDir.poolsDir).length > 0;
}

function holdsEvents(root: string): boolean {
  const dataDir = new DataDir(root);
  return existsSync(dataDir.eventsDir) && readdirSync(dataDir.eventsDir).some((name) => name.endsWith('.ndjson'));
}
