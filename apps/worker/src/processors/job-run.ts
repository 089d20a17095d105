import type { JobContext } from '@engram/maintenance';
import { requestContext } from '@engram/observability';
import { UnrecoverableError, type Job } from 'bullmq';

/** The handler's view of a delivery. */
export function jobContext(job: Job): JobContext {
  return { jobId: job.id ?? `${job.name}-${job.timestamp}`, enqueuedAt: new Date(job.timestamp) };
}

/** Runs a handler with the job id as the log context, so its memory calls and logs name the job. */
export function inJobScope<T>(job: Job, pool: string | undefined, run: () => Promise<T>): Promise<T> {
  return requestContext.run({ requestId: job.id ?? job.name, ...(pool ? { pool } : {}) }, run);
}

/** The `never` arm of a processor's switch: a job name this queue does not know fails once, without retries. */
export function unknownJob(name: never, queue: string): never {
  throw new UnrecoverableError(`queue ${queue} has no handler for job ${JSON.stringify(name)}`);
}
