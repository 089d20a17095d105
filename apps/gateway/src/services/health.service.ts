import { MemoryPattern, type MemoryClient } from '@engram/contracts';
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
      Promise.race([
        this.redis.ping().then(() => 'up' as const),
        new Promise<'down'>((resolve) => setTimeout(() => resolve('down'), this.timeoutMs).unref()),
      ]).catch(() => 'down' as const),
    ]);
    return { ready: memory === 'up' && redis === 'up', checks: { memory, redis } };
  }
}
