import { type MemoryClient, MemoryPattern } from '@engram/contracts';
import type { MemoryEvent } from '@engram/domain';
import { jobOptionsFor, queueOfJob, QueueName, type JobItem } from '@engram/jobs';
import { Queue, QueueEvents, type Job, type JobsOptions } from 'bullmq';
import { startParts, type StartedParts } from '../support/started-parts.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startMemory, startWorker, type RunningMemory, type RunningWorker } from '../support/stack.js';

/** Redis, a real memory service and a real worker process, plus the clients a test drives them with. */
export interface WorkerStack {
  readonly redis: TestRedis;
  readonly memory: RunningMemory;
  /** The worker running now (restartWorker starts another). */
  readonly worker: RunningWorker;
  readonly client: MemoryClient;
  readonly workerEnv: Readonly<Record<string, string>>;
  /** Adds a job as a producer would (registry options), or with the given options. */
  enqueue(item: JobItem, options?: JobsOptions): Promise<Job>;
  /** Waits until the job completed and gives its result; throws with the failure reason if it failed. */
  finished(job: Job, timeoutMs?: number): Promise<unknown>;
  queue(name: QueueName): Queue;
  events(pool: string): Promise<MemoryEvent[]>;
  restartWorker(): Promise<void>;
  stop(): Promise<void>;
}

export function startWorkerStack(options: {
  readonly memoryEnv?: Readonly<Record<string, string>>;
  readonly workerEnv?: Readonly<Record<string, string>>;
}): Promise<WorkerStack> {
  return startParts((parts) => start(parts, options));
}

async function start(
  parts: StartedParts,
  options: { readonly memoryEnv?: Readonly<Record<string, string>>; readonly workerEnv?: Readonly<Record<string, string>> },
): Promise<WorkerStack> {
  const redis = parts.add(await startRedis(), (started) => started.stop());
  const memory = parts.add(await startMemory({ REDIS_URL: redis.url, ...options.memoryEnv }), (started) => started.stop());
  const workerEnv = { REDIS_URL: redis.url, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off', ...options.workerEnv };
  const running = { worker: await startWorker(workerEnv) };
  // The worker of the moment: restartWorker replaces it.
  parts.add(running, (current) => current.worker.stop());
  const client = parts.add(memory.client(10_000), (started) => started.close());
  const queues = new Map<QueueName, Queue>();
  const queueEvents = new Map<QueueName, QueueEvents>();
  parts.add(null, async () => {
    await Promise.all([...queueEvents.values()].map((events) => events.close()));
    await Promise.all([...queues.values()].map((item) => item.close()));
  });
  const queue = (name: QueueName): Queue => {
    let found = queues.get(name);
    if (!found) {
      found = new Queue(name, { connection: { url: redis.url } });
      queues.set(name, found);
    }
    return found;
  };
  const eventsOf = async (name: QueueName): Promise<QueueEvents> => {
    let found = queueEvents.get(name);
    if (!found) {
      found = new QueueEvents(name, { connection: { url: redis.url } });
      await found.waitUntilReady();
      queueEvents.set(name, found);
    }
    return found;
  };

  const stack: WorkerStack = {
    redis,
    memory,
    get worker() {
      return running.worker;
    },
    client,
    workerEnv,
    enqueue: async (item, jobOptions) => {
      const name = queueOfJob[item.name];
      await eventsOf(name);
      return queue(name).add(item.name, item.data, jobOptions ?? jobOptionsFor(item));
    },
    finished: async (job, timeoutMs = 30_000) => job.waitUntilFinished(await eventsOf(job.queueName as QueueName), timeoutMs) as Promise<unknown>,
    queue,
    events: (pool) => client.call(MemoryPattern.EventsAfter, { after: 0, pool, limit: 1000 }),
    restartWorker: async () => {
      running.worker = await startWorker(workerEnv);
    },
    stop: () => parts.stopAll(),
  };
  return stack;
}

export const ALL_QUEUES = Object.values(QueueName);
