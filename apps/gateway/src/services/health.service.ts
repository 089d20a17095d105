import { MemoryPattern, type MemoryClient } from '@engram/contracts';
import { pingRedis } from '@engram/observability';
import type { Redis } from 'ioredis';

export interface Readiness {
  readonly ready: boolean;
  readonly checks: { readonly memory: 'up' | 'down'; readonly redis: 'up' | 'down' };
}

/** `/readyz`: whether memory and Redis answer right now, and which one is missing. */
export class HealthService {
  constructor(
    private readonly memory: Pick<MemoryClient, 'call'>,
    private readonly redis: Redis,
    private readonly timeoutMs: number,
  ) {}

  async readiness(): Promise<Readiness> {
    const [memory, redis] = await Promise.all([
      this.memory.call(MemoryPattern.Ping, {}, this.timeoutMs).then(
        () => 'up' as const,
        () => 'down' as const,
      ),
      pingRedis(this.redis, this.timeoutMs),
    ]);
    return { ready: memory === 'up' && redis === 'up', checks: { memory, redis } };
  }
}
