import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { IdRequest } from '@engram/contracts';
import type { Logger } from '@engram/observability';
import { jobDataHolds } from '@engram/jobs';
import type { ExtractionSpool, MemoryService } from '@engram/memory-store';
import { JobQueueRepository } from '../repositories/job-queue.repository.js';
import { EXTRACTION_SPOOL, LOGGER, MEMORY_SERVICE } from '../memory.tokens.js';

const RETRY_MS = 5_000;
/** Texts of one entry's history looked for in job data (each store and each content change is one). */
const MAX_TEXTS = 50;

/**
 * A purge forgets the entry in the store (database, log, flat files, moved-aside databases), in the
 * extraction spool, and then in Redis: the pool's jobs whose data holds any text the entry ever had
 * are removed. Redis may be
 * down or a job may be running: then it tries again every few seconds until done or the process ends.
 */
@Injectable()
export class PurgeService implements OnModuleDestroy {
  private readonly retries = new Set<NodeJS.Timeout>();

  constructor(
    @Inject(MEMORY_SERVICE) private readonly memory: MemoryService,
    @Inject(JobQueueRepository) private readonly queues: JobQueueRepository,
    @Inject(EXTRACTION_SPOOL) private readonly spool: ExtractionSpool,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async purge(request: IdRequest): Promise<{ readonly id: string; readonly purged: true }> {
    const texts = await this.textsOf(request);
    const result = await this.memory.purge(request);
    if (texts.length > 0) {
      this.scrubSpool(request.pool, texts);
      void this.scrubJobs(request.pool, result.id, texts);
    }
    return result;
  }

  onModuleDestroy(): void {
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
  }

  /** Every content the entry had, read from its history before the purge redacts it. */
  private async textsOf(request: IdRequest): Promise<string[]> {
    if (typeof request.pool !== 'string' || typeof request.id !== 'string') return [];
    const page = await this.memory.events({ pool: request.pool, memoryId: request.id, limit: 1000 }).catch(() => undefined);
    const texts = new Set<string>();
    for (const event of page?.data ?? []) {
      if (event.type === 'memory.stored' || event.type === 'memory.consolidated' || event.type === 'memory.updated') {
        if ('content' in event.data && typeof event.data.content === 'string' && event.data.content !== '' && event.data.id === request.id) {
          texts.add(event.data.content);
        }
      }
    }
    return [...texts].slice(-MAX_TEXTS);
  }

  /** Exchanges kept on disk while Redis was down (see ExtractionSpool). */
  private scrubSpool(pool: string, texts: readonly string[]): void {
    for (const item of this.spool.list()) {
      if (item.pool === pool && texts.some((text) => jobDataHolds(item, text))) this.spool.remove(item.exchangeId);
    }
  }

  private async scrubJobs(pool: string, id: string, texts: readonly string[]): Promise<void> {
    try {
      const { removed, running } = await this.queues.removeJobsHolding(pool, texts);
      if (removed > 0) this.logger.info({ pool, id, jobs: removed }, 'purge removed jobs that held the entry text');
      if (running === 0) return;
      this.logger.warn({ pool, id, running }, 'purge: a job holding the entry text is running; removing it once it ends');
    } catch (error) {
      this.logger.warn({ err: error, pool, id }, 'purge could not reach Redis to remove jobs holding the entry text; retrying');
    }
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      void this.scrubJobs(pool, id, texts);
    }, RETRY_MS);
    timer.unref();
    this.retries.add(timer);
  }
}
