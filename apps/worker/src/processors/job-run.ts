import { MemoryError } from '@engram/contracts';
import type { JobContext } from '@engram/worker-handlers';
import { requestContext } from '@engram/observability';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';

/** The longest a job waits between tries while memory is away. */
export const MEMORY_AWAY_MAX_WAIT_MS = 30_000;

/** The handler's view of a delivery. */
export function jobContext(job: Job): JobContext {
  return { jobId: job.id ?? `${job.name}-${job.timestamp}`, enqueuedAt: new Date(job.timestamp) };
}

/**
 * Runs a handler in a log context: the request id of the exchange that caused the job when it
 * carries one (extraction), else the job id; its memory calls and logs then name it.
 */
export function inJobScope<T>(job: Job, pool: string | undefined, run: () => Promise<T>): Promise<T> {
  return requestContext.run({ requestId: jobRequestId(job), ...(pool ? { pool } : {}) }, () => waitingOutMemory(job, run));
}

/**
 * Memory away (down, restarting, out of disk and read-only, its event store unreachable) is not the
 * job's fault: the job waits and tries again (1 s, doubling to 30 s between tries) without spending
 * one of its attempts, however long memory is away, instead of landing in the failed set after
 * about 30 s of retries and losing what it would have stored.
 */
async function waitingOutMemory<T>(job: Job, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof MemoryError && error.code === 'unavailable')) throw error;
    const wait = Math.min(MEMORY_AWAY_MAX_WAIT_MS, 1_000 * 2 ** Math.min(15, Math.max(0, job.attemptsStarted - 1)));
    await job.moveToDelayed(Date.now() + wait, job.token);
    throw new DelayedError(`memory is away (${error.message}): tried again in ${wait} ms`);
  }
}

export function jobRequestId(job: Job): string {
  const fromData = (job.data as { requestId?: unknown } | undefined)?.requestId;
  return typeof fromData === 'string' ? fromData : (job.id ?? job.name);
}

/** The `never` arm of a processor's switch: a job name this queue does not know fails once, without retries. */
export function unknownJob(name: never, queue: string): never {
  throw new UnrecoverableError(`queue ${queue} has no handler for job ${JSON.stringify(name)}`);
}
