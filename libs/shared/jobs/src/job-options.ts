import type { JobSchedulerTemplateOptions, JobsOptions, WorkerOptions } from 'bullmq';
import { JobName, QueueName } from './queue-name.js';
import type { JobItem } from './job-item.js';

const retried: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 24 * 3600, count: 1_000 },
  // Failed jobs stay visible to an operator (and retryable) for a week.
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** At most one consolidation per pool is enqueued in this window. */
export const CONSOLIDATION_WINDOW_MS = 10 * 60_000;

/** BullMQ refuses custom job ids with a ':' (it reserves them for repeat keys); pool names and times may hold one. */
function idPart(value: string): string {
  return value.replaceAll(':', '_');
}

/**
 * All job options live here. Job ids derive from the causing event (or exchange), so a job enqueued
 * twice (re-driven after a crash, or by two producers) is one job.
 */
export function jobOptionsFor(item: JobItem): JobsOptions {
  switch (item.name) {
    case JobName.CategorizeEntry:
      return { ...retried, jobId: `categorize.${idPart(item.data.eventId)}` };
    case JobName.ConsolidatePool:
      return {
        ...retried,
        attempts: 3,
        jobId: `consolidate.${idPart(item.data.eventId)}`,
        // Every store past the threshold asks again. One run per pool per window is enough (a
        // model call each time would cost for nothing), and a pool is never consolidated twice at once.
        deduplication: { id: `consolidate.${idPart(item.data.pool)}`, ttl: CONSOLIDATION_WINDOW_MS },
      };
    case JobName.DecaySweep:
      // A sweep is idempotent and cheap, so it is not de-duplicated, except a replay at a fixed time.
      return {
        ...retried,
        attempts: 3,
        jobId: item.data.asOf ? `decay.${idPart(item.data.pool ?? '*')}.${idPart(item.data.asOf)}` : undefined,
      };
    case JobName.ExtractExchange:
      // The exchange, not the request id a client chose (two exchanges may share one).
      return { ...retried, jobId: `extract.${idPart(item.data.exchangeId)}` };
    // Each run embeds whatever of the pool has no vector yet, so a later job finds nothing left to do
    // and calls no endpoint; retries cover an endpoint that is down for a while.
    case JobName.EmbedPool:
      return { ...retried, attempts: 8, jobId: `embed.${idPart(item.data.eventId)}` };
    default: {
      const unreachable: never = item;
      throw new Error(`no options for job ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The hourly (by default) decay sweep over every pool, as a BullMQ job scheduler. */
export const DECAY_SCHEDULER_ID = 'decay-sweep.all-pools';

export function decaySchedule(everyMs: number): {
  readonly id: string;
  readonly repeat: { readonly every: number };
  readonly template: { readonly name: typeof JobName.DecaySweep; readonly data: Record<string, never>; readonly opts: JobSchedulerTemplateOptions };
} {
  const { jobId: _none, ...opts } = jobOptionsFor({ name: JobName.DecaySweep, data: {} });
  return { id: DECAY_SCHEDULER_ID, repeat: { every: everyMs }, template: { name: JobName.DecaySweep, data: {}, opts } };
}

/**
 * How a worker holds its jobs. A short lock (renewed every half lock while the job runs) means a
 * job of a worker killed mid-run is back in the queue within seconds, not half a minute.
 */
export function workerOptionsFor(queue: QueueName): Pick<WorkerOptions, 'concurrency' | 'lockDuration' | 'stalledInterval' | 'maxStalledCount'> {
  const crashSafe = { lockDuration: 6_000, stalledInterval: 3_000, maxStalledCount: 2 };
  switch (queue) {
    // Each categorization is two small RPCs; many in flight let the memory service group-commit
    // their events under one fsync (bench/worker.bench.ts: ~1.8x the throughput of 8).
    case QueueName.Categorize:
      return { ...crashSafe, concurrency: 32 };
    // An extraction lists its pool to de-duplicate: heavier, fewer at once.
    case QueueName.Extract:
      return { ...crashSafe, concurrency: 8 };
    case QueueName.Consolidate:
    case QueueName.Decay:
      return { ...crashSafe, concurrency: 1 };
    // One at a time: two runs for one pool would read the same missing texts and embed them twice.
    case QueueName.Embed:
      return { ...crashSafe, lockDuration: 60_000, stalledInterval: 30_000, concurrency: 1 };
    default: {
      const unreachable: never = queue;
      throw new Error(`no worker options for queue ${String(unreachable)}`);
    }
  }
}
