import { DEFAULT_POOL, isValidPoolName } from '@engram/domain';
import type { PoolGrant } from './api-keys.js';
import { clientError, type EngramHttpError } from './errors.js';

export interface PoolSources {
  /** From the path prefix `/pools/<pool>/v1/...` or the REST path `/engram/pools/:pool/...`. */
  readonly pathPool?: string | undefined;
  /** The `x-engram-pool` header. */
  readonly headerPool?: string | undefined;
}

export type PoolDecision = { readonly pool: string; readonly error?: undefined } | { readonly pool?: undefined; readonly error: EngramHttpError };

/**
 * docs/DESIGN.md, "Pools": path prefix, then header, then the key's first pool, then `default`; first
 * match wins. A malformed name is a 400 (never a path); a pool the key was not granted is a 403.
 */
export function selectPool(sources: PoolSources, grant: PoolGrant): PoolDecision {
  const named = sources.pathPool ?? (sources.headerPool || undefined);
  if (named !== undefined && !isValidPoolName(named)) {
    return { error: clientError(400, 'invalid pool name: use 1-64 of a-z 0-9 . _ - starting with a letter or digit', 'invalid_pool') };
  }
  const pool = named ?? (grant.all ? DEFAULT_POOL : (grant.pools[0] ?? DEFAULT_POOL));
  if (!grant.all && !grant.pools.includes(pool)) {
    return { error: clientError(403, 'this API key is not granted that pool', 'pool_forbidden') };
  }
  return { pool };
}
