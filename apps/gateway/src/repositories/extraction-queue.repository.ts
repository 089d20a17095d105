import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { MemoryPattern, type MemoryClient } from '@engram/contracts';
import type { EngramConfig } from '@engram/config';
import { JobName, jobOptionsFor, queueOfJob, queuedJobData, type ExtractExchangeData, type JobItem } from '@engram/jobs';
import type { ExtractionPort } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { CONFIG, LOGGER, MEMORY_CLIENT, REDIS } from '../gateway.tokens.js';

/**
 * Hands exchanges with memory suggestions to the worker's extraction queue. With Redis down the
 * memory service keeps them on disk instead (memory.spool-extraction); never fatal, never waited for.
 * With an at-rest key the exchange's texts are sealed before they reach Redis (and its append-only file).
 */
@Injectable()
export class ExtractionQueueRepository implements ExtractionPort, OnApplicationShutdown {
  private queue: Queue | undefined;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(MEMORY_CLIENT) private readonly memory: Pick<MemoryClient, 'call'>,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CONFIG) private readonly config: Pick<EngramConfig, 'encryptionKey'>,
  ) {}

  /** After the HTTP server has answered its last request (Nest's shutdown). */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  enqueue(data: ExtractExchangeData): void {
    // The connection fails fast; a Queue set up on it before it is ready keeps that first failure.
    if (this.redis.status !== 'ready') {
      this.spool(data, 'Redis unavailable');
      return;
    }
    const item: JobItem = { name: JobName.ExtractExchange, data };
    this.ensureQueue()
      .add(item.name, queuedJobData(item, this.config.encryptionKey), jobOptionsFor(item))
      .then(
        () => undefined,
        (error: unknown) => this.spool(data, (error as Error).message),
      );
  }

  /** Redis did not take the job: memory keeps the exchange on disk and enqueues it once Redis is back. */
  private spool(data: ExtractExchangeData, reason: string): void {
    this.memory.call(MemoryPattern.SpoolExtraction, data).then(
      () => this.logger.warn({ requestId: data.requestId, pool: data.pool, reason }, 'extraction job kept by memory until Redis is back'),
      (error: unknown) =>
        this.logger.warn(
          { requestId: data.requestId, pool: data.pool, reason, err: (error as Error).message },
          'extraction job skipped: neither Redis nor memory took it',
        ),
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
