import { Inject, Injectable } from '@nestjs/common';
import { MEMORY_CHANGED_CHANNEL, type MemoryChangedMessage } from '@engram/contracts';
import type { MemoryEvent } from '@engram/domain';
import type { Redis } from 'ioredis';
import { REDIS } from '../memory.tokens.js';

@Injectable()
export class ChangePublisherRepository {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  /** One message per pool touched, carrying its last seq. Fire and forget: gateways keep a TTL. */
  publish(events: readonly MemoryEvent[]): void {
    const lastSeqByPool = new Map<string, number>();
    for (const event of events) lastSeqByPool.set(event.pool, event.seq);
    for (const [pool, seq] of lastSeqByPool) {
      const message: MemoryChangedMessage = { pool, seq };
      this.redis.publish(MEMORY_CHANGED_CHANNEL, JSON.stringify(message)).catch(() => undefined);
    }
  }
}
