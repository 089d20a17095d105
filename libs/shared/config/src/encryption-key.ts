import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';

const KEY_BYTES = 32;

/**
 * The at-rest key (ENGRAM_ENCRYPTION_KEY): 32 random bytes, written as 64 hex digits or base64.
 * SQLCipher takes the bytes as a raw key (no passphrase derivation, so `sqlcipher` opens the files
 * with `PRAGMA key = "x'<hex>'"`); what Engram seals itself uses a key derived from them; the data dir
 * records only `id`, a fingerprint that tells a wrong key from damage and reveals nothing of the key.
 * The bytes never appear in a log line, an error or JSON.
 */
export class EncryptionKey {
  readonly #bytes: Buffer;

  private constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }

  /** A fresh key, as `npx engram keygen` prints it. */
  static generate(): string {
    return randomBytes(KEY_BYTES).toString('hex');
  }

  /** Reads 64 hex digits or base64 (standard or URL-safe) of 32 bytes; throws saying what is expected, never echoing the text. */
  static parse(text: string): EncryptionKey {
    const value = text.trim();
    if (/^[0-9a-fA-F]{64}$/.test(value)) return new EncryptionKey(Buffer.from(value, 'hex'));
    if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
      const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
      if (bytes.length === KEY_BYTES) return new EncryptionKey(bytes);
    }
    throw new Error(`must be ${KEY_BYTES} bytes written as 64 hex digits or base64 (44 characters); \`npx engram keygen\` prints a fresh one`);
  }

  /** SQLCipher's raw-key form, for `PRAGMA key` and `ATTACH ... KEY`. */
  get sqlcipherKey(): string {
    return `x'${this.#bytes.toString('hex')}'`;
  }

  /** The key for what Engram seals itself (AES-256-GCM), derived so that it differs from the database key. */
  sealingKey(): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#bytes, Buffer.alloc(0), 'engram at-rest sealing v1', KEY_BYTES));
  }

  /** A fingerprint of the key, stored beside encrypted data: the same key gives the same id. */
  get id(): string {
    return createHmac('sha256', this.#bytes).update('engram key id v1').digest('hex').slice(0, 32);
  }

  toJSON(): string {
    return '[EncryptionKey]';
  }

  toString(): string {
    return '[EncryptionKey]';
  }

  [inspect.custom](): string {
    return `EncryptionKey(id ${this.id})`;
  }
}
