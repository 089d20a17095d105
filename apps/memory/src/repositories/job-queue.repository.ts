import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { jobOptionsFor, queueOfJob, type JobItem, type QueueName } from '@engram/jobs';
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
    const added = Promise.all(
      items.map((item) => this.queue(queueOfJob[item.name]).add(item.name, item.data, jobOptionsFor(item))),
    );
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

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
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
