import type { EncryptionKey } from '@engram/config';

/**
 * How the pages of an encrypted data dir's SQLite files are encrypted, recorded per data dir (the
 * `databases` field of its encryption.json) so that a data dir keeps opening after the default moves on.
 * Both are authenticated, per page, with the page number bound in: a changed or moved page fails to read.
 * - `aegis-256`: SQLite3 Multiple Ciphers' AEGIS-256 (a random 256-bit nonce and a 256-bit tag per page),
 *   with AES instructions: what new data dirs get.
 * - `sqlcipher-4`: SQLCipher 4 (AES-256-CBC and HMAC-SHA512 per page), what the first encrypted data dirs
 *   have; several times slower to write and check (README, Benchmarks). `engram encrypt` with the same
 *   key moves such a data dir to `aegis-256`.
 */
export type PageCipher = 'aegis-256' | 'sqlcipher-4';

export const PAGE_CIPHERS: readonly PageCipher[] = ['aegis-256', 'sqlcipher-4'];

/** The cipher a data dir encrypted now gets. */
export const CURRENT_PAGE_CIPHER: PageCipher = 'aegis-256';

/** The key of an encrypted data dir's SQLite files and how they use it; null for a plaintext data dir. */
export type AtRestKey = { readonly key: EncryptionKey; readonly cipher: PageCipher } | null;

/** The pragmas that choose the cipher, before `key` or `rekey`. */
export function cipherPragmas(cipher: PageCipher): string[] {
  return cipher === 'aegis-256' ? [`cipher = 'aegis'`, `algorithm = 'aegis-256'`] : [`cipher = 'sqlcipher'`, 'legacy = 4'];
}
