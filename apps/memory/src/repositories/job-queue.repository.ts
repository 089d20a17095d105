import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { QueueName, SealedJobError, jobDataHolds, jobOptionsFor, openedExtractionData, queueOfJob, queuedJobData, type JobItem } from '@engram/jobs';
import { Queue } from 'bullmq';
import { CONFIG } from '../memory.tokens.js';

const ENQUEUE_DEADLINE_MS = 2_000;

/**
 * The BullMQ producer side: one Queue per queue name, created on first use, on BullMQ's own
 * connection (it reconnects by itself). An add that Redis does not acknowledge in time counts
 * as failed; it may still land later, which is harmless because job ids are deterministic.
 */
@Injectable()
export class JobQueueRepository implements OnModuleDestroy {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(@Inject(CONFIG) private readonly config: EngramConfig) {}

  async enqueue(items: readonly JobItem[]): Promise<void> {
    const added = Promise.all(items.map((item) => this.queue(queueOfJob[item.name]).add(item.name, queuedJobData(item, this.config.encryptionKey), jobOptionsFor(item))));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not accept jobs within ${ENQUEUE_DEADLINE_MS} ms`)), ENQUEUE_DEADLINE_MS);
    });
    try {
      await Promise.race([added, deadline]);
    } finally {
      clearTimeout(timer);
      added.catch(() => undefined);
    }
  }

  /**
   * Removes the pool's jobs whose data holds any of `texts`, in every queue and state a job can wait
   * or be kept in (BullMQ keeps finished jobs for a day or a week, and Redis may write them to its
   * AOF). A job running right now is locked and stays; the count of those is returned to retry.
   */
  async removeJobsHolding(pool: string, texts: readonly string[]): Promise<{ removed: number; running: number }> {
    let removed = 0;
    let running = 0;
    for (const name of Object.values(QueueName)) {
      const jobs = await this.queue(name).getJobs(['waiting', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed', 'active']);
      for (const job of jobs) {
        if ((job.data as { pool?: unknown } | undefined)?.pool !== pool) continue;
        if (!texts.some((text) => jobDataHolds(this.opened(job.data), text))) continue;
        if (await job.isActive()) {
          running += 1;
          continue;
        }
        await job.remove();
        removed += 1;
      }
    }
    return { removed, running };
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }

  /** A job's data with its sealed texts opened; data that does not open (another key) holds nothing readable. */
  private opened(data: unknown): unknown {
    try {
      return openedExtractionData(data as Parameters<typeof openedExtractionData>[0], this.config.encryptionKey);
    } catch (error) {
      if (error instanceof SealedJobError) return null;
      throw error;
    }
  }

  private queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: { url: this.config.redisUrl } });
      // A failed add surfaces in the outbox, which retries; the queue's own error events add nothing.
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }
}
