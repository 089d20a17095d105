import { type MemoryClient, MemoryPattern } from '@engram/contracts';
import type { MemoryEvent } from '@engram/domain';
import { jobOptionsFor, queueOfJob, QueueName, type JobItem } from '@engram/jobs';
import { Queue, QueueEvents, type Job, type JobsOptions } from 'bullmq';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startMemory, startWorker, type RunningMemory, type RunningWorker } from '../support/stack.js';

/** Redis, a real memory service and a real worker process, plus the clients a test drives them with. */
export interface WorkerStack {
  readonly redis: TestRedis;
  readonly memory: RunningMemory;
  worker: RunningWorker;
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

export async function startWorkerStack(options: {
  readonly memoryEnv?: Readonly<Record<string, string>>;
  readonly workerEnv?: Readonly<Record<string, string>>;
}): Promise<WorkerStack> {
  const redis = await startRedis();
  const memory = await startMemory({ REDIS_URL: redis.url, ...options.memoryEnv });
  const workerEnv = { REDIS_URL: redis.url, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off', ...options.workerEnv };
  const worker = await startWorker(workerEnv);
  const client = memory.client(10_000);
  const queues = new Map<QueueName, Queue>();
  const queueEvents = new Map<QueueName, QueueEvents>();
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
    worker,
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
      stack.worker = await startWorker(workerEnv);
    },
    stop: async () => {
      await Promise.all([...queueEvents.values()].map((events) => events.close()));
      await Promise.all([...queues.values()].map((item) => item.close()));
      await stack.worker.stop();
      await client.close();
      await memory.stop();
      await redis.stop();
    },
  };
  return stack;
}

export const ALL_QUEUES = Object.values(QueueName);
