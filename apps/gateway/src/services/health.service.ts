import { MemoryPattern, type MemoryClient } from '@engram/contracts';
import type { AuthMode } from '@engram/gateway-engine';
import { pingRedis } from '@engram/observability';
import type { Redis } from 'ioredis';

export interface Readiness {
  readonly ready: boolean;
  /** memory `read-only`: its data disk is full, it takes no writes (stores answer 503) until space is freed. */
  readonly checks: { readonly memory: 'up' | 'down' | 'read-only'; readonly redis: 'up' | 'down' };
  /** Since when memory's disk is full, and the error it got; absent otherwise. */
  readonly memoryDiskFull?: { readonly since: string; readonly error: string };
  /** `open`: no ENGRAM_API_KEYS, anyone who reaches the port may use every pool. */
  readonly auth: AuthMode;
}

/** `/readyz`: whether memory and Redis answer right now, which one is missing, whether memory takes writes, and whether keys are required. */
export class HealthService {
  constructor(
    private readonly memory: Pick<MemoryClient, 'call'>,
    private readonly redis: Redis,
    private readonly timeoutMs: number,
    private readonly auth: AuthMode,
  ) {}

  async readiness(): Promise<Readiness> {
    const [ping, redis] = await Promise.all([
      this.memory.call(MemoryPattern.Ping, {}, this.timeoutMs).catch(() => null),
      pingRedis(this.redis, this.timeoutMs),
    ]);
    const memory = ping === null ? 'down' : ping.diskFull ? 'read-only' : 'up';
    return {
      ready: memory === 'up' && redis === 'up',
      checks: { memory, redis },
      ...(ping?.diskFull ? { memoryDiskFull: ping.diskFull } : {}),
      auth: this.auth,
    };
  }
}
