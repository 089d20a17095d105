import { createHash, timingSafeEqual } from 'node:crypto';
import { isValidPoolName } from '@engram/domain';

/** What a key may touch: every pool, or these (the first is its default). */
export type PoolGrant = { readonly all: true } | { readonly all: false; readonly pools: readonly string[] };

interface KeyEntry {
  readonly digest: Buffer;
  readonly grant: PoolGrant;
}

/**
 * `ENGRAM_API_KEYS=key1=work+home,key2=*`. Undefined: open mode (no key needed, every pool).
 * Keys are compared as SHA-256 digests with timingSafeEqual, so neither content nor length leaks.
 */
export class ApiKeys {
  private constructor(private readonly entries: readonly KeyEntry[] | null) {}

  static parse(raw: string | undefined): ApiKeys {
    if (raw === undefined || raw.trim() === '') return new ApiKeys(null);
    const entries = raw.split(',').map((part, position) => {
      const separator = part.lastIndexOf('=');
      const key = part.slice(0, separator).trim();
      const pools = part.slice(separator + 1).trim();
      if (separator <= 0 || key === '' || pools === '') {
        throw new Error(`ENGRAM_API_KEYS entry ${position + 1} must look like key=work+home or key=*`);
      }
      const grant: PoolGrant = pools === '*' ? { all: true } : { all: false, pools: pools.split('+').map((pool) => pool.trim()) };
      if (!grant.all && !grant.pools.every(isValidPoolName)) {
        throw new Error(`ENGRAM_API_KEYS entry ${position + 1} names an invalid pool`);
      }
      return { digest: digest(key), grant };
    });
    return new ApiKeys(entries);
  }

  get open(): boolean {
    return this.entries === null;
  }

  /** The grant of a presented key; in open mode every request gets every pool. Null: no such key. */
  authenticate(presented: string | undefined): PoolGrant | null {
    if (this.entries === null) return ALL;
    if (!presented) return null;
    const candidate = digest(presented);
    let match: PoolGrant | null = null;
    // Compare against every key so the time does not depend on which one matched.
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, candidate) && match === null) match = entry.grant;
    }
    return match;
  }
}

const ALL: PoolGrant = { all: true };

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The presented key: `Authorization: Bearer <key>` or `x-api-key: <key>` (Anthropic clients). */
export function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  if (authorization && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, '').trim();
  return apiKeyHeader?.trim() || undefined;
}
