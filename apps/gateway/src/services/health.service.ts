import { MemoryPattern, type MemoryClient } from '@engram/contracts';
import type { AuthMode } from '@engram/gateway-engine';
import { pingRedis } from '@engram/observability';
import type { Redis } from 'ioredis';

export interface Readiness {
  readonly ready: boolean;
  readonly checks: { readonly memory: 'up' | 'down'; readonly redis: 'up' | 'down' };
  /** `open`: no ENGRAM_API_KEYS, anyone who reaches the port may use every pool. */
  readonly auth: AuthMode;
}

/** `/readyz`: whether memory and Redis answer right now, which one is missing, and whether keys are required. */
export class HealthService {
  constructor(
    private readonly memory: Pick<MemoryClient, 'call'>,
    private readonly redis: Redis,
    private readonly timeoutMs: number,
    private readonly auth: AuthMode,
  ) {}

  async readiness(): Promise<Readiness> {
    const [memory, redis] = await Promise.all([
      this.memory.call(MemoryPattern.Ping, {}, this.timeoutMs).then(
        () => 'up' as const,
        () => 'down' as const,
      ),
      pingRedis(this.redis, this.timeoutMs),
    ]);
    return { ready: memory === 'up' && redis === 'up', checks: { memory, redis }, auth: this.auth };
  }
}
