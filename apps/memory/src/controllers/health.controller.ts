import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import { pingRedis } from '@engram/observability';
import type { MemoryService } from '@engram/memory-store';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { MEMORY_SERVICE, REDIS } from '../memory.tokens.js';

/** HTTP beside the TCP transport, for compose healthchecks and operators. */
@Controller()
export class HealthController {
  constructor(
    @Inject(MEMORY_SERVICE) private readonly memory: MemoryService,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  @Get('healthz')
  @HttpCode(200)
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready when the store answers. Redis only carries jobs, so without it memory is degraded, not down.
   * A full data disk makes the store read-only (writes refused until space is freed): not ready.
   */
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<object> {
    const store = await this.memory.ping({}).then(
      (answer) =>
        answer.diskFull
          ? {
              status: 'read-only' as const,
              lastSeq: answer.lastSeq,
              reason: 'the data disk is full: no writes are taken until space is freed',
              ...answer.diskFull,
            }
          : { status: 'up' as const, lastSeq: answer.lastSeq },
      (error: Error) => ({ status: 'down' as const, error: error.message }),
    );
    const redis = await pingRedis(this.redis, 500);
    const status = store.status !== 'up' ? store.status : redis === 'down' ? 'degraded' : 'ready';
    void reply.status(store.status === 'up' ? 200 : 503);
    return { status, checks: { store, redis: { status: redis } } };
  }
}
