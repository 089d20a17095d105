import type { MemoryEvent } from '@engram/domain';
import { JobName } from './queue-name.js';
import type { JobItem } from './job-item.js';

export interface DeriveJobsContext {
  /** Active entries of the pool now (at dispatch time). */
  activeCount(pool: string): number;
  readonly consolidationThreshold: number;
}

/**
 * The log is the outbox: the jobs an event calls for are a pure function of the event (and the
 * pool's size), so re-deriving them after a crash enqueues the same job ids again, which BullMQ
 * de-duplicates.
 */
export function deriveJobs(event: MemoryEvent, context: DeriveJobsContext): JobItem[] {
  switch (event.type) {
    case 'memory.stored': {
      const jobs: JobItem[] = [];
      if (event.data.category === null) {
        jobs.push({
          name: JobName.CategorizeEntry,
          data: { pool: event.pool, memoryId: event.data.id, eventId: event.id },
        });
      }
      if (context.activeCount(event.pool) > context.consolidationThreshold) {
        jobs.push({
          name: JobName.ConsolidatePool,
          data: { pool: event.pool, seq: event.seq, eventId: event.id },
        });
      }
      return jobs;
    }
    case 'memory.updated':
    case 'memory.categorized':
    case 'memory.referenced':
    case 'memory.confirmed':
    case 'memory.archived':
    case 'memory.restored':
    case 'memory.deleted':
    case 'memory.purged':
    case 'memory.consolidated':
      return [];
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${JSON.stringify(unreachable)}`);
    }
  }
}
