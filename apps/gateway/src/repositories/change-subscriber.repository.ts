import { MEMORY_CHANGED_CHANNEL, type MemoryChangedMessage } from '@engram/contracts';
import type { Logger } from '@engram/observability';
import { Redis } from 'ioredis';

/**
 * Listens on `engram:memory-changed` and reports each `{"pool","seq"}`. While the subscription is
 * down, announcements are lost: `onResync` is called when it is back, and `listening` tells
 * callers not to trust long-lived caches meanwhile.
 */
export class ChangeSubscriberRepository {
  private readonly redis: Redis;
  private down = false;

  constructor(
    url: string,
    private readonly logger: Logger,
    private readonly handlers: { onChange(message: MemoryChangedMessage): void; onResync(): void },
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: null, connectTimeout: 2_000, retryStrategy: (attempt) => Math.min(attempt * 200, 2_000) });
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
