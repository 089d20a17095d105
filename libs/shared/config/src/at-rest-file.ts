import type { EncryptionKey } from './encryption-key.js';
import { openPieces, PIECES_FILE_HEADER } from './sealed-pieces.js';

/** The first bytes of a file Engram sealed: readable by `head`, so a person sees what the file is. */
const SEALED_FILE_HEADER = Buffer.from('engram-sealed-v1\n');

/** A file of the data dir and the configured key do not go together (sealed without a key, plain with one). */
export class AtRestFileError extends Error {
  override name = 'AtRestFileError';
}

/**
 * A file's bytes as they go to disk: with a key, the header and the sealed content (`place`, the
 * file's path in the data dir, as associated data, so a file cannot be passed off as another);
 * without, the content itself.
 */
export function sealFile(content: Uint8Array, key: EncryptionKey | null, place: string): Buffer {
  if (!key) return Buffer.from(content);
  return Buffer.concat([SEALED_FILE_HEADER, key.seal(content, place)]);
}

/** The content of a file written by sealFile (or sealed in pieces, sealed-pieces.ts) with the same key and place; throws AtRestFileError or UnsealError. */
export function openFile(stored: Uint8Array, key: EncryptionKey | null, place: string): Buffer {
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const sealed = isSealedFile(bytes);
  if (sealed && !key) throw new AtRestFileError(`${place} is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE)`);
  if (!sealed && key) throw new AtRestFileError(`${place} is not encrypted but ENGRAM_ENCRYPTION_KEY is set`);
  if (!key) return bytes;
  return startsWith(bytes, PIECES_FILE_HEADER) ? openPieces(bytes, key, place) : key.open(bytes.subarray(SEALED_FILE_HEADER.length), place);
}

export function isSealedFile(bytes: Uint8Array): boolean {
  return startsWith(bytes, SEALED_FILE_HEADER) || startsWith(bytes, PIECES_FILE_HEADER);
}

function startsWith(bytes: Uint8Array, header: Buffer): boolean {
  return bytes.length >= header.length && Buffer.from(bytes.buffer, bytes.byteOffset, header.length).equals(header);
}
