import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { JobName } from '@engram/jobs';
import type { Logger } from '@engram/observability';
import type { MemoryService } from '@engram/memory-store';
import { EMBEDDING_MODEL, LOGGER, MEMORY_SERVICE } from '../memory.tokens.js';
import { JobQueueRepository } from '../repositories/job-queue.repository.js';

const RETRY_MS = 30_000;

/**
 * At start, with hybrid search on: one embedding job for each pool holding entries without a
 * vector of the configured model (entries from before hybrid search was turned on, a new model,
 * a lost vectors.db). New entries after that get theirs from the outbox.
 */
@Injectable()
export class EmbeddingBackfillService implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(MEMORY_SERVICE) private readonly memory: MemoryService,
    @Inject(JobQueueRepository) private readonly queues: JobQueueRepository,
    @Inject(EMBEDDING_MODEL) private readonly model: string | null,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    void this.backfill(`backfill-${Date.now()}`);
  }

  onModuleDestroy(): void {
    clearTimeout(this.timer);
  }

  private async backfill(runId: string): Promise<void> {
    const vectors = this.memory.vectors;
    if (!vectors || !this.model) return;
    const pools = vectors.poolsMissing(this.model);
    if (pools.length === 0) return;
    try {
      await this.queues.enqueue(pools.map((pool) => ({ name: JobName.EmbedPool, data: { pool, eventId: `${runId}-${pool}` } })));
      this.logger.info({ pools, model: this.model }, 'asked the worker to embed entries that have no vector yet');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not enqueue the embedding backfill; retrying');
      this.timer = setTimeout(() => void this.backfill(runId), RETRY_MS);
      this.timer.unref();
    }
  }
}
