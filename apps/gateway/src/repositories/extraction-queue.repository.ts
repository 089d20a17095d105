import { JobName, jobOptionsFor, queueOfJob, type ExtractExchangeData, type JobItem } from '@engram/jobs';
import type { ExtractionPort } from '@engram/engine';
import type { Logger } from '@engram/observability';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** Hands exchanges with memory suggestions to the worker's extraction queue; Redis down is logged, never fatal. */
export class ExtractionQueueRepository implements ExtractionPort {
  private queue: Queue | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  enqueue(data: ExtractExchangeData): void {
    // The connection fails fast; a Queue set up on it before it is ready keeps that first failure.
    if (this.redis.status !== 'ready') {
      this.logger.warn({ requestId: data.requestId, pool: data.pool }, 'extraction job skipped: Redis unavailable');
      return;
    }
    const item: JobItem = { name: JobName.ExtractExchange, data };
    this.ensureQueue()
      .add(item.name, item.data, jobOptionsFor(item))
      .then(
        () => undefined,
        (error: unknown) => this.logger.warn({ requestId: data.requestId, err: (error as Error).message, pool: data.pool }, 'extraction job not enqueued'),
      );
  }

  async close(): Promise<void> {
    await this.queue?.close();
  }

  private ensureQueue(): Queue {
    if (!this.queue) {
      this.queue = new Queue(queueOfJob[JobName.ExtractExchange], { connection: this.redis, skipWaitingForReady: true });
      this.queue.on('error', () => undefined);
    }
    return this.queue;
  }
}
