import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import type { MemoryEvent } from '@engram/domain';
import { deriveBatchJobs } from '@engram/jobs';
import type { Logger } from '@engram/observability';
import type { CommitFeed, MemoryService } from '@engram/memory-store';
import { ChangePublisherRepository } from '../repositories/change-publisher.repository.js';
import { JobQueueRepository } from '../repositories/job-queue.repository.js';
import { COMMIT_FEED, CONFIG, LOGGER, MEMORY_SERVICE } from '../memory.tokens.js';

const BATCH = 500;
/** Committed events kept for dispatch in memory; past this (a long Redis outage) the log is read instead. */
const MAX_BUFFERED = 10_000;
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * Turns committed events into worker jobs. The log is the outbox: a cursor (the last dispatched
 * seq, kept by the store) moves only after the jobs of every event up to it were accepted by
 * Redis, so a crash or a Redis outage delays jobs and never loses one.
 */
@Injectable()
export class OutboxService implements OnApplicationBootstrap, OnModuleDestroy {
  private draining = false;
  private again = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failing = false;
  private retryMs = RETRY_MIN_MS;
  private closed = false;
  /** Events handed over by commits, not yet dispatched, in seq order: saves reading back what was just written. */
  private buffered: MemoryEvent[] = [];

  constructor(
    @Inject(MEMORY_SERVICE) private readonly memory: MemoryService,
    @Inject(COMMIT_FEED) private readonly commits: Pick<CommitFeed, 'subscribe'>,
    @Inject(JobQueueRepository) private readonly queues: JobQueueRepository,
    @Inject(ChangePublisherRepository) private readonly changes: ChangePublisherRepository,
    @Inject(CONFIG) private readonly config: EngramConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.commits.subscribe((events) => {
      this.changes.publish(events);
      this.buffered.push(...events);
      if (this.buffered.length > MAX_BUFFERED) this.buffered = [];
      void this.drain();
    });
    void this.drain();
  }

  onModuleDestroy(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  async drain(): Promise<void> {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    try {
      do {
        this.again = false;
        await this.dispatchPending();
      } while (this.again && !this.closed);
      if (this.failing) this.logger.info('job dispatch resumed');
      this.failing = false;
      this.retryMs = RETRY_MIN_MS;
    } catch (error) {
      if (!this.failing) this.logger.warn({ err: error }, 'job dispatch failed; retrying (memory keeps serving)');
      this.failing = true;
      this.scheduleRetry();
    } finally {
      this.draining = false;
    }
  }

  private async dispatchPending(): Promise<void> {
    for (;;) {
      const events = await this.nextBatch();
      const last = events.at(-1);
      if (!last) return;
      // A batch is derived in one synchronous pass, so every event of it sees the same count: count
      // each pool once, not once per stored event (a count walks the pool's index: ~1 ms at 10k
      // entries, ~6 ms at 100k, i.e. seconds of blocked event loop per batch of a backlog).
      const counts = new Map<string, number>();
      const activeCount = (pool: string): number => {
        const count = counts.get(pool) ?? this.memory.activeCount(pool);
        counts.set(pool, count);
        return count;
      };
      const context = { activeCount, consolidationThreshold: this.config.consolidation.threshold, embeddings: this.config.embeddings !== null };
      const jobs = deriveBatchJobs(events, context);
      if (jobs.length > 0) await this.queues.enqueue(jobs);
      this.memory.markDispatched(last.seq);
    }
  }

  /**
   * The next events after the cursor: from the buffer when it continues the cursor exactly,
   * otherwise (at start, after a failed dispatch, past the buffer's cap) from the log, the source
   * of truth.
   */
  private async nextBatch(): Promise<MemoryEvent[]> {
    const after = this.memory.dispatchedSeq();
    const firstPending = this.buffered.findIndex((event) => event.seq > after);
    this.buffered = firstPending < 0 ? [] : this.buffered.slice(firstPending);
    let run = 0;
    while (run < this.buffered.length && run < BATCH && this.buffered[run]?.seq === after + 1 + run) run++;
    if (run > 0) return this.buffered.splice(0, run);
    this.buffered = [];
    return this.memory.eventsAfter({ after, limit: BATCH });
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.drain();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.retryTimer.unref();
  }
}
