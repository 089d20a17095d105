import type { JobsOptions } from 'bullmq';
import { JobName } from './queue-name.js';
import type { JobItem } from './job-item.js';

const retried: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 24 * 3600, count: 1_000 },
  // Failed jobs stay visible to an operator (and retryable) for a week.
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * All job options live here. Job ids derive from the causing event, so a job enqueued twice
 * (re-driven after a crash, or by two producers) is one job.
 */
export function jobOptionsFor(item: JobItem): JobsOptions {
  switch (item.name) {
    case JobName.CategorizeEntry:
      return { ...retried, jobId: `categorize:${item.data.eventId}` };
    case JobName.ConsolidatePool:
      return { ...retried, attempts: 3, jobId: `consolidate:${item.data.pool}:${item.data.eventId}` };
    case JobName.DecaySweep:
      return { ...retried, attempts: 3, jobId: item.data.pool ? `decay:${item.data.pool}` : undefined };
    case JobName.ExtractExchange:
      return { ...retried, jobId: `extract:${item.data.requestId}` };
    default: {
      const unreachable: never = item;
      throw new Error(`no options for job ${JSON.stringify(unreachable)}`);
    }
  }
}
