import { Redis } from 'ioredis';

/**
 * A Redis connection that fails fast while Redis is away (no offline queue), for the things a
 * service does beside its main work (change announcements, readiness): the service keeps
 * serving and reports Redis as missing instead of queueing commands for later.
 */
export function createFailFastRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  redis.on('error', () => undefined); // readiness reports the outage; callers log its consequences once
  return redis;
}

/** Whether Redis answers a PING within the deadline. */
export function pingRedis(redis: Pick<Redis, 'ping'>, timeoutMs: number): Promise<'up' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'down'>((resolve) => {
    timer = setTimeout(() => resolve('down'), timeoutMs);
  });
  return Promise.race([redis.ping().then(() => 'up' as const), late])
    .catch(() => 'down' as const)
    .finally(() => clearTimeout(timer));
}
