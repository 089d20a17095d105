import { JobName, jobOptionsFor, queueOfJob, type ExtractExchangeData, type JobItem } from '@engram/jobs';
import type { ExtractionPort } from '@engram/engine';
import type { Logger } from '@engram/observability';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** Hands exchanges with memory suggestions to the worker's extraction queue; Redis down is logged, never fatal. */
export class ExtractionQueueRepository implements ExtractionPort {
  private readonly queue: Queue;

  constructor(
    redis: Redis,
    private readonly logger: Logger,
  ) {
    this.queue = new Queue(queueOfJob[JobName.ExtractExchange], { connection: redis, skipWaitingForReady: true });
    this.queue.on('error', () => undefined);
  }

  enqueue(data: ExtractExchangeData): void {
    const item: JobItem = { name: JobName.ExtractExchange, data };
    this.queue.add(item.name, item.data, jobOptionsFor(item)).then(
      () => undefined,
      (error: unknown) => this.logger.warn({ err: (error as Error).message, pool: data.pool }, 'extraction job not enqueued (Redis unavailable?)'),
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
