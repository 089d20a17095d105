import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Nonces drawn from the CSPRNG at a time: one small randomBytes call costs about what a whole seal does. */
const NONCE_POOL = 1024;

/** A sealed text failed its authentication: another key, or changed bytes (or moved: its associated data differs). */
export class UnsealError extends Error {
  override name = 'UnsealError';
}

/**
 * The at-rest key (ENGRAM_ENCRYPTION_KEY): 32 random bytes, written as 64 hex digits or base64.
 * The SQLite driver takes the bytes as a raw key (no passphrase derivation: `PRAGMA key = "x'<hex>'"`,
 * SQLCipher's form, which SQLite3 Multiple Ciphers reads for every cipher); what Engram seals itself
 * uses a key derived from them; the data dir records only `id`, a fingerprint that tells a wrong key
 * from damage and reveals nothing of the key.
 * The bytes never appear in a log line, an error or JSON.
 */
export class EncryptionKey {
  readonly #bytes: Buffer;
  #sealing: Buffer | undefined;
  #nonces = Buffer.alloc(0);
  #nextNonce = 0;

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

  /** The raw-key form (SQLCipher's syntax, whatever the cipher), for `PRAGMA key` and `ATTACH ... KEY`. */
  get sqlcipherKey(): string {
    return `x'${this.#bytes.toString('hex')}'`;
  }

  /**
   * AES-256-GCM with a fresh random nonce: `nonce (12) | ciphertext | tag (16)`. `associatedData`
   * (where the bytes belong: a file's place, an event's id, pool and seq) is authenticated, not
   * stored: bytes moved elsewhere fail to open. The key is derived from the configured one (HKDF),
   * so it is never the databases' key.
   */
  seal(plaintext: Uint8Array, associatedData: string): Buffer {
    const nonce = this.freshNonce();
    const cipher = createCipheriv('aes-256-gcm', this.sealingKey(), nonce);
    cipher.setAAD(Buffer.from(associatedData));
    const body = cipher.update(plaintext);
    const rest = cipher.final();
    return Buffer.concat([nonce, body, rest, cipher.getAuthTag()]);
  }

  /** The plaintext of `seal`'s output; throws UnsealError for another key, changed bytes or other associated data. */
  open(sealed: Uint8Array, associatedData: string): Buffer {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new UnsealError('sealed bytes too short');
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    const decipher = createDecipheriv('aes-256-gcm', this.sealingKey(), bytes.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      const plaintext = decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES));
      // GCM releases nothing at the end: final() only checks the tag (and throws when it does not match).
      decipher.final();
      return plaintext;
    } catch {
      throw new UnsealError('the sealed bytes do not open with this key (another key, or changed or moved bytes)');
    }
  }

  /** 12 random bytes never handed out before (from a pool the CSPRNG refills). */
  private freshNonce(): Buffer {
    if (this.#nextNonce >= this.#nonces.length) {
      this.#nonces = randomBytes(NONCE_BYTES * NONCE_POOL);
      this.#nextNonce = 0;
    }
    const nonce = this.#nonces.subarray(this.#nextNonce, this.#nextNonce + NONCE_BYTES);
    this.#nextNonce += NONCE_BYTES;
    return nonce;
  }

  private sealingKey(): Buffer {
    this.#sealing ??= Buffer.from(hkdfSync('sha256', this.#bytes, Buffer.alloc(0), 'engram at-rest sealing v1', KEY_BYTES));
    return this.#sealing;
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
