import type { JobContext } from '@engram/worker-handlers';
import { requestContext } from '@engram/observability';
import { UnrecoverableError, type Job } from 'bullmq';

/** The handler's view of a delivery. */
export function jobContext(job: Job): JobContext {
  return { jobId: job.id ?? `${job.name}-${job.timestamp}`, enqueuedAt: new Date(job.timestamp) };
}

/**
 * Runs a handler in a log context: the request id of the exchange that caused the job when it
 * carries one (extraction), else the job id; its memory calls and logs then name it.
 */
export function inJobScope<T>(job: Job, pool: string | undefined, run: () => Promise<T>): Promise<T> {
  return requestContext.run({ requestId: jobRequestId(job), ...(pool ? { pool } : {}) }, run);
}

export function jobRequestId(job: Job): string {
  const fromData = (job.data as { requestId?: unknown } | undefined)?.requestId;
  return typeof fromData === 'string' ? fromData : (job.id ?? job.name);
}

/** The `never` arm of a processor's switch: a job name this queue does not know fails once, without retries. */
export function unknownJob(name: never, queue: string): never {
  throw new UnrecoverableError(`queue ${queue} has no handler for job ${JSON.stringify(name)}`);
}
