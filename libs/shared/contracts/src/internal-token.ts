import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The shared secret of the memory RPC channel (ENGRAM_INTERNAL_TOKEN). Every call carries it in
 * the packet's metadata (out of band: payloads stay the contract's types); memory refuses a call
 * without it. Unset, memory generates one into `$ENGRAM_DATA_DIR/internal-token` (mode 0600) on
 * its first start, and the gateway, the worker, the CLI and the tests read it from there.
 */
export const INTERNAL_TOKEN_FILE = 'internal-token';
export const INTERNAL_TOKEN_METADATA_KEY = 'engramInternalToken';

export function internalTokenPath(dataDir: string): string {
  return join(dataDir, INTERNAL_TOKEN_FILE);
}

/** The token in the data dir, or undefined when memory has not written one (yet). */
export function readInternalToken(dataDir: string): string | undefined {
  try {
    const token = readFileSync(internalTokenPath(dataDir), 'utf8').trim();
    return token === '' ? undefined : token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Memory at start: ENGRAM_INTERNAL_TOKEN when set, else the data dir's token, else a new one
 * written there. Written to a temp file and linked into place, so a reader never sees half a
 * token and two starts never write two different ones.
 */
export function ensureInternalToken(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const existing = readInternalToken(dataDir);
  if (existing) return existing;
  const token = randomBytes(32).toString('hex');
  const temp = `${internalTokenPath(dataDir)}.${process.pid}.tmp`;
  writeFileSync(temp, `${token}\n`, { mode: 0o600 });
  try {
    linkSync(temp, internalTokenPath(dataDir));
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = readInternalToken(dataDir);
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
  ) {}

  current(): string | undefined {
    if (this.configured) return this.configured;
    this.cached ??= readInternalToken(this.dataDir);
    return this.cached;
  }

  refused(): void {
    this.cached = undefined;
  }
}
