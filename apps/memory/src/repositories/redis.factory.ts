import { Redis } from 'ioredis';

/**
 * A connection that fails fast instead of queueing commands while Redis is away: the memory
 * service keeps serving, and the outbox re-drives jobs once Redis answers again.
 */
export function createFailFastRedis(url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}
