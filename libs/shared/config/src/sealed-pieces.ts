import { randomBytes } from 'node:crypto';
import { type EncryptionKey, UnsealError } from './encryption-key.js';

/** The first bytes of a file sealed in pieces. */
export const PIECES_FILE_HEADER = Buffer.from('engram-sealed-v2\n');
const FILE_ID_BYTES = 16;
const LENGTH_BYTES = 4;

/**
 * A file Engram rewrites whole after each change but that grows mostly at its end (a pool's flat
 * files): sealed in pieces, so that a rewrite seals only the pieces that are new, not the whole file
 * again (AES-GCM of a 1 MiB file costs more than the rest of a write).
 *
 * Layout: the header, a random file id, then one record per piece: its length (4 bytes, big-endian)
 * and EncryptionKey.seal of the piece. A piece's associated data is the file's place, the file id and
 * the piece's index; the last record's also says it is the last. So a record cannot be moved to
 * another place, file or index, a file cut after any record does not open (its last record was not
 * sealed as the last), and as long as a file id is kept the piece at an index never changes (a piece
 * that differs starts a new id): whatever opens is a file that was written, never a mix of two.
 */
export class PiecesSealer {
  #fileId = randomBytes(FILE_ID_BYTES);
  /** The records of the pieces sealed under the file id, and what each sealed (compared before reuse). */
  #sealed: { readonly piece: Buffer; readonly record: Buffer }[] = [];

  constructor(
    private readonly key: EncryptionKey,
    private readonly place: string,
  ) {}

  /** The file's bytes for `pieces` as buffers to write one after the other (the last piece is sealed as the last record). */
  seal(pieces: readonly Buffer[]): Buffer[] {
    const body = pieces.slice(0, -1);
    const changed = body.findIndex((piece, index) => {
      const sealed = this.#sealed[index];
      return !sealed || (sealed.piece !== piece && !sealed.piece.equals(piece));
    });
    if (changed !== -1 && changed < this.#sealed.length) {
      this.#fileId = randomBytes(FILE_ID_BYTES);
      this.#sealed = [];
    }
    for (let index = this.#sealed.length; index < body.length; index++) {
      this.#sealed.push({ piece: body[index]!, record: record(this.key.seal(body[index]!, pieceAad(this.place, this.#fileId, index, false))) });
    }
    const last = pieces.at(-1) ?? Buffer.alloc(0);
    const end = record(this.key.seal(last, pieceAad(this.place, this.#fileId, body.length, true)));
    return [PIECES_FILE_HEADER, this.#fileId, ...this.#sealed.slice(0, body.length).map((sealed) => sealed.record), end];
  }
}

/** The content of a file written by PiecesSealer (header included) with the same key and place; throws UnsealError. */
export function openPieces(bytes: Buffer, key: EncryptionKey, place: string): Buffer {
  let offset = PIECES_FILE_HEADER.length + FILE_ID_BYTES;
  if (bytes.length < offset) throw new UnsealError(`${place} is cut short`);
  const fileId = bytes.subarray(PIECES_FILE_HEADER.length, offset);
  const pieces: Buffer[] = [];
  for (let index = 0; ; index++) {
    if (offset + LENGTH_BYTES > bytes.length) throw new UnsealError(`${place} is cut short`);
    const length = bytes.readUInt32BE(offset);
    const end = offset + LENGTH_BYTES + length;
    if (end > bytes.length) throw new UnsealError(`${place} is cut short`);
    const last = end === bytes.length;
    pieces.push(key.open(bytes.subarray(offset + LENGTH_BYTES, end), pieceAad(place, fileId, index, last)));
    if (last) return Buffer.concat(pieces);
    offset = end;
  }
}

function record(sealed: Buffer): Buffer {
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeUInt32BE(sealed.length);
  return Buffer.concat([length, sealed]);
}

function pieceAad(place: string, fileId: Buffer, index: number, last: boolean): string {
  return JSON.stringify([place, fileId.toString('hex'), index, last]);
}
