import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EncryptionKey, openFile, sealFile } from '@engram/config';

/**
 * The shared secret of the memory RPC channel (ENGRAM_INTERNAL_TOKEN). Every call carries it in
 * the packet's metadata (out of band: payloads stay the contract's types); memory refuses a call
 * without it. Unset, memory generates one into `$ENGRAM_DATA_DIR/internal-token` (mode 0600) on
 * its first start, and the gateway, the worker, the CLI and the tests read it from there. With an
 * at-rest key (ENGRAM_ENCRYPTION_KEY) the file is sealed, and every reader needs the key.
 */
export const INTERNAL_TOKEN_FILE = 'internal-token';
export const INTERNAL_TOKEN_METADATA_KEY = 'engramInternalToken';

export function internalTokenPath(dataDir: string): string {
  return join(dataDir, INTERNAL_TOKEN_FILE);
}

/** The token in the data dir, or undefined when memory has not written one (yet). */
export function readInternalToken(dataDir: string, key: EncryptionKey | null = null): string | undefined {
  let stored: Buffer;
  try {
    stored = readFileSync(internalTokenPath(dataDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  // A token file being linked into place is never partial; an empty one is treated as absent, as before.
  if (stored.length === 0) return undefined;
  const token = openFile(stored, key, INTERNAL_TOKEN_FILE).toString('utf8').trim();
  return token === '' ? undefined : token;
}

/**
 * Memory at start: ENGRAM_INTERNAL_TOKEN when set, else the data dir's token, else a new one
 * written there. Written to a temp file and linked into place, so a reader never sees half a
 * token and two starts never write two different ones.
 */
export function ensureInternalToken(configured: string | undefined, dataDir: string, key: EncryptionKey | null = null): string {
  if (configured) return configured;
  const existing = readInternalToken(dataDir, key);
  if (existing) return existing;
  const token = randomBytes(32).toString('hex');
  const temp = `${internalTokenPath(dataDir)}.${process.pid}.tmp`;
  writeFileSync(temp, sealFile(Buffer.from(`${token}\n`), key, INTERNAL_TOKEN_FILE), { mode: 0o600 });
  try {
    linkSync(temp, internalTokenPath(dataDir));
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = readInternalToken(dataDir, key);
    if (!winner) throw error;
    return winner;
  } finally {
    unlinkSync(temp);
  }
}

/** Compares SHA-256 digests in constant time, so neither the token nor its length leaks. */
export function isInternalToken(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/**
 * A caller's token: ENGRAM_INTERNAL_TOKEN when set, else read from the data dir on first use
 * (memory may still be writing it when the gateway starts) and again after memory refused it
 * (memory's data dir was replaced, say).
 */
export class InternalTokenSource {
  private cached: string | undefined;

  constructor(
    private readonly configured: string | undefined,
    private readonly dataDir: string,
    private readonly key: EncryptionKey | null = null,
  ) {}

  current(): string | undefined {
    if (this.configured) return this.configured;
    this.cached ??= readInternalToken(this.dataDir, this.key);
    return this.cached;
  }

  refused(): void {
    this.cached = undefined;
  }
}
