import type { MemoryEvent } from '@engram/domain';
import { JobName } from './queue-name.js';
import type { JobItem } from './job-item.js';

export interface DeriveJobsContext {
  /** Active entries of the pool now (at dispatch time). */
  activeCount(pool: string): number;
  readonly consolidationThreshold: number;
  /** Hybrid search is on: new text asks for an embedding job. */
  readonly embeddings?: boolean;
}

/**
 * The log is the outbox: the jobs an event calls for are a pure function of the event (and the
 * pool's size), so re-deriving them after a crash enqueues the same job ids again, which BullMQ
 * de-duplicates.
 */
/**
 * The jobs of a batch of events, in order, with one consolidation per pool: the batch's last
 * stored event past the threshold asks for it. The others would be dropped by BullMQ's per-pool
 * de-duplication anyway, after one Redis round trip each (a bulk import of 100k entries made
 * about 90k of them).
 */
export function deriveBatchJobs(events: readonly MemoryEvent[], context: DeriveJobsContext): JobItem[] {
  const jobs = events.flatMap((event) => deriveJobs(event, context));
  const lastOfPool = new Map<string, number>();
  jobs.forEach((job, index) => {
    if (job.name === JobName.ConsolidatePool || job.name === JobName.EmbedPool) lastOfPool.set(`${job.name}/${job.data.pool}`, index);
  });
  return jobs.filter(
    (job, index) =>
      (job.name !== JobName.ConsolidatePool && job.name !== JobName.EmbedPool) || lastOfPool.get(`${job.name}/${job.data.pool}`) === index,
  );
}

export function deriveJobs(event: MemoryEvent, context: DeriveJobsContext): JobItem[] {
  return [...maintenanceJobs(event, context), ...embeddingJobs(event, context)];
}

/** An event that brings new text to a pool asks for its embedding (one job per pool and batch, see deriveBatchJobs). */
function embeddingJobs(event: MemoryEvent, context: DeriveJobsContext): JobItem[] {
  if (context.embeddings !== true) return [];
  const newText =
    event.type === 'memory.stored' || event.type === 'memory.consolidated' || (event.type === 'memory.updated' && event.data.content !== undefined);
  return newText ? [{ name: JobName.EmbedPool, data: { pool: event.pool, eventId: event.id } }] : [];
}

function maintenanceJobs(event: MemoryEvent, context: DeriveJobsContext): JobItem[] {
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
