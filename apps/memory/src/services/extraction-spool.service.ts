import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { SpoolExtractionRequest } from '@engram/contracts';
import { JobName } from '@engram/jobs';
import type { Logger } from '@engram/observability';
import type { ExtractionSpool } from '@engram/memory-store';
import { JobQueueRepository } from '../repositories/job-queue.repository.js';
import { EXTRACTION_SPOOL, LOGGER } from '../memory.tokens.js';

const DRAIN_EVERY_MS = 2_000;
const DRAIN_BATCH = 100;

/**
 * Keeps the exchanges the gateway could not enqueue while Redis was down (see ExtractionSpool) and
 * enqueues them once Redis takes jobs again, so no `<MEMORY_SUGGEST>` fact is dropped by an outage.
 */
@Injectable()
export class ExtractionSpoolService implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private draining = false;

  constructor(
    @Inject(EXTRACTION_SPOOL) private readonly spool: ExtractionSpool,
    @Inject(JobQueueRepository) private readonly queues: JobQueueRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.drain(), DRAIN_EVERY_MS);
    this.timer.unref();
    void this.drain();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  put(request: SpoolExtractionRequest): { readonly spooled: true } {
    this.spool.put(request);
    this.logger.info(
      { pool: request.pool, requestId: request.requestId, exchangeId: request.exchangeId, waiting: this.spool.size },
      'kept an extraction on disk until Redis takes jobs again',
    );
    return { spooled: true };
  }

  async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        const items = this.spool.list(DRAIN_BATCH);
        if (items.length === 0) return;
        await this.queues.enqueue(items.map((data) => ({ name: JobName.ExtractExchange, data })));
        for (const item of items) this.spool.remove(item.exchangeId);
        this.logger.info({ jobs: items.length }, 'enqueued extractions kept while Redis was down');
      }
    } catch (error) {
      this.logger.debug({ err: error }, 'spooled extractions wait for Redis');
    } finally {
      this.draining = false;
    }
  }
}
