import { Redis } from 'ioredis';

/**
 * A Redis connection that fails fast while Redis is away (no offline queue): the gateway keeps
 * proxying, extraction jobs are skipped with a log line, and readiness says Redis is missing.
 */
export function createFailFastRedis(url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}
