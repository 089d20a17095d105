/**
 * The worker as a real process against a real memory service and Redis:
 * - categorize throughput at steady state (jobs the memory service's outbox enqueued, drained by one worker);
 * - a deterministic consolidation of a 200-entry pool (wall time of the job, entries before and after).
 */
import { MemoryPattern } from '@engram/contracts';
import { jobOptionsFor, JobName, QueueName, workerOptionsFor, type JobItem } from '@engram/jobs';
import { Queue, QueueEvents } from 'bullmq';
import { startRedis } from '../tests/support/redis.js';
import { startMemory, startWorker } from '../tests/support/stack.js';
import type { BenchRow } from './run.js';

const CATEGORIZE_JOBS = 2_000;
const POOL_SIZE = 200;
const DUPLICATES = 60;

const SUBJECTS = ['gateway', 'memory service', 'worker', 'CLI', 'dashboard', 'billing API', 'search index', 'auth proxy', 'mailer', 'scheduler'];
const FACTS = [
  (s: string, i: number) => `The ${s} listens on port ${4000 + i}`,
  (s: string, i: number) => `Deploying the ${s} needs migration step ${i}`,
  (s: string, i: number) => `The ${s} logs to the ${['loki', 'elastic', 'stdout', 'syslog'][i % 4]} sink in region ${i}`,
  (s: string, i: number) => `We decided the ${s} keeps ${i} replicas in production`,
  (s: string, i: number) => `Tests of the ${s} fail when fixture ${i} is missing`,
  (s: string, i: number) => `The ${s} owner for quarter ${i} is team ${String.fromCharCode(65 + (i % 26))}`,
  (s: string, i: number) => `Feature flag ${i} gates the new ${s} flow`,
];

/** Distinct facts, then rephrasings of some of them (what consolidation should fold). */
function poolContents(): string[] {
  const distinct = Array.from({ length: POOL_SIZE - DUPLICATES }, (_, i) => {
    const fact = FACTS[i % FACTS.length]!;
    return fact(SUBJECTS[Math.floor(i / FACTS.length) % SUBJECTS.length]!, i);
  });
  const rephrased = Array.from({ length: DUPLICATES }, (_, k) => {
    const original = distinct[(k * 37) % distinct.length]!;
    return k % 2 === 0 ? `${original.replace(/^The /, 'the ')}.` : `Note: ${original.toLowerCase()}`;
  });
  return [...distinct, ...rephrased];
}

async function inParallel(count: number, width: number, task: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

export async function run(): Promise<BenchRow[]> {
  const redis = await startRedis();
  // The outbox enqueues categorization; its consolidation trigger stays out of the measurement.
  const memory = await startMemory({ REDIS_URL: redis.url, CONSOLIDATION_THRESHOLD: '100000' }, { timeoutMs: 60_000 });
  const client = memory.client(30_000);
  const connection = { url: redis.url };
  const categorize = new Queue(QueueName.Categorize, { connection });
  const consolidate = new Queue(QueueName.Consolidate, { connection });
  const categorizeEvents = new QueueEvents(QueueName.Categorize, { connection });
  const consolidateEvents = new QueueEvents(QueueName.Consolidate, { connection });
  await Promise.all([categorizeEvents.waitUntilReady(), consolidateEvents.waitUntilReady()]);
  const workerEnv = { REDIS_URL: redis.url, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off', CONSOLIDATION_THRESHOLD: '20', LOG_LEVEL: 'error' };
  let worker = null as Awaited<ReturnType<typeof startWorker>> | null;
  try {
    // 1. Categorize: seed uncategorized entries with no worker running, then drain with one worker.
    await inParallel(CATEGORIZE_JOBS, 32, (i) =>
      client.call(MemoryPattern.Store, { pool: `cat-${i % 8}`, actor: 'user', content: `Build ${i} crashed on the CI runner` }),
    );
    const deadline = Date.now() + 60_000;
    while ((await categorize.getWaitingCount()) < CATEGORIZE_JOBS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const completions: number[] = [];
    categorizeEvents.on('completed', () => completions.push(performance.now()));
    worker = await startWorker({ ...workerEnv, WORKER_QUEUES: `${QueueName.Categorize},${QueueName.Consolidate}` });
    while (completions.length < CATEGORIZE_JOBS && Date.now() < deadline + 120_000) await new Promise((r) => setTimeout(r, 100));
    // Steady state: the middle 80% of completions, without start-up and tail.
    const from = Math.floor(CATEGORIZE_JOBS * 0.1);
    const to = Math.floor(CATEGORIZE_JOBS * 0.9);
    const steadyJobsPerSecond = ((to - from) / (completions[to]! - completions[from]!)) * 1000;
    const categorized = (await client.call(MemoryPattern.List, { pool: 'cat-0', category: 'gotcha', limit: 1000 })).length;

    // 2. Deterministic consolidation of one 200-entry pool.
    const pool = 'consolidate-200';
    const contents = poolContents();
    for (const content of contents) {
      await client.call(MemoryPattern.Store, { pool, actor: 'user', content, type: 'MEMORY', category: 'project' });
    }
    const before = (await client.call(MemoryPattern.List, { pool, limit: 1000 })).length;
    const lastSeq = (await client.call(MemoryPattern.Stats, {})).lastSeq;
    const item: JobItem = { name: JobName.ConsolidatePool, data: { pool, seq: lastSeq, eventId: 'bench-200' } };
    const started = performance.now();
    const job = await consolidate.add(item.name, item.data, jobOptionsFor(item));
    const outcome = (await job.waitUntilFinished(consolidateEvents, 120_000)) as { before: number; after: number; planner: string };
    const elapsedMs = performance.now() - started;
    const after = (await client.call(MemoryPattern.List, { pool, limit: 1000 })).length;

    return [
      {
        suite: 'worker',
        metric: `categorize jobs/s (steady state, 1 worker, concurrency ${workerOptionsFor(QueueName.Categorize).concurrency})`,
        value: steadyJobsPerSecond,
        unit: 'jobs/s',
        note: `${CATEGORIZE_JOBS} jobs from the outbox; each = Get + Categorize RPC (fsynced event); ${categorized} of ${CATEGORIZE_JOBS / 8} in pool cat-0 categorized`,
      },
      {
        suite: 'worker',
        metric: `consolidate ${POOL_SIZE}-entry pool, deterministic (enqueue to completion)`,
        value: elapsedMs,
        unit: 'ms',
        note: `planner ${outcome.planner}; entries ${before} -> ${after} (${DUPLICATES} planted rephrasings; ideal ${POOL_SIZE - DUPLICATES})`,
      },
      { suite: 'worker', metric: 'consolidation entries before', value: before, unit: 'entries' },
      { suite: 'worker', metric: 'consolidation entries after', value: after, unit: 'entries' },
    ];
  } finally {
    await worker?.stop();
    await Promise.all([categorizeEvents.close(), consolidateEvents.close(), categorize.close(), consolidate.close()]);
    await client.close();
    await memory.stop();
    await redis.stop();
  }
}
