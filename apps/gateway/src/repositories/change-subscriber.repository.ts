import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { MEMORY_CHANGED_CHANNEL, type MemoryChangedMessage } from '@engram/contracts';
import type { GatewayTier1Cache } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import { Redis } from 'ioredis';
import { CONFIG, LOGGER, TIER1_CACHE } from '../gateway.tokens.js';

/**
 * Listens on `engram:memory-changed` and reports each `{"pool","seq"}`. While the subscription is
 * down, announcements are lost: `onResync` is called when it is back, and `listening` tells
 * callers not to trust long-lived caches meanwhile.
 */
@Injectable()
export class ChangeSubscriberRepository implements OnApplicationShutdown {
  private readonly redis: Redis;
  private down = false;
  private readonly handlers: { onChange(message: MemoryChangedMessage): void; onResync(): void };

  /** Each announcement drops the pool from the gateway's Tier 1 cache; a resync drops them all. */
  constructor(
    @Inject(CONFIG) config: Pick<EngramConfig, 'redisUrl'>,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(TIER1_CACHE) cache: Pick<GatewayTier1Cache, 'changed' | 'clear'>,
  ) {
    this.handlers = { onChange: (message) => cache.changed(message), onResync: () => cache.clear() };
    this.redis = new Redis(config.redisUrl, {
      maxRetriesPerRequest: null,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    this.redis.on('message', (_channel: string, text: string) => this.receive(text));
    this.redis.on('ready', () => {
      if (this.down) logger.info('Redis is back: Tier 1 cache resynchronised');
      this.down = false;
      this.handlers.onResync();
    });
    this.redis.on('error', (error: Error) => {
      if (!this.down) logger.warn({ err: error.message }, 'Redis unavailable: no memory-change announcements, no extraction jobs');
      this.down = true;
    });
    this.redis.on('close', () => {
      this.down = true;
    });
    this.redis.subscribe(MEMORY_CHANGED_CHANNEL).catch(() => undefined);
  }

  get listening(): boolean {
    return this.redis.status === 'ready';
  }

  /** After the HTTP server has answered its last request (Nest's shutdown). */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private receive(text: string): void {
    try {
      const message = JSON.parse(text) as MemoryChangedMessage;
      if (typeof message.pool === 'string' && typeof message.seq === 'number') this.handlers.onChange(message);
    } catch {
      this.logger.warn({ text }, 'ignored a malformed memory-changed message');
    }
  }
}
