import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { JobName, jobOptionsFor, QueueName, type JobItem } from '@engram/jobs';
import { eventually } from '@engram/testing';
import { Queue } from 'bullmq';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startMemory, startWorker, type RunningMemory, type RunningWorker } from '../support/stack.js';

const FACT = 'The build server is called hopper';

/**
 * Memory away (stopped here; a full disk or an unreachable event store answer the same 'unavailable')
 * is not a job's failure: the job waits for it without spending its attempts, so an exchange queued
 * for extraction while memory is away longer than the retries last is still extracted once it is back.
 */
describe('a worker job while memory is away', () => {
  let redis: TestRedis;
  let home: string;
  let memory: RunningMemory | undefined;
  let worker: RunningWorker | undefined;
  let extract: Queue;

  beforeAll(async () => {
    redis = await startRedis();
    home = mkdtempSync(join(tmpdir(), 'engram-away-'));
    extract = new Queue(QueueName.Extract, { connection: { url: redis.url } });
  });
  afterAll(async () => {
    await extract?.close();
    await worker?.stop();
    await memory?.stop();
    await redis?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('waits, its attempts unspent, however often memory refuses, and runs once memory is back', async () => {
    const dataDir = join(home, 'data');
    const first = await startMemory({ REDIS_URL: redis.url }, { dataDir });
    const { port, healthPort } = first;
    worker = await startWorker({ REDIS_URL: redis.url, ...first.clientEnv });
    await first.stop({ keepData: true });

    const item: JobItem = {
      name: JobName.ExtractExchange,
      data: { pool: 'home', requestId: 'r-away', exchangeId: 'r-away', suggestions: [FACT], exchange: { user: 'what is the build server called?', assistant: 'Hopper.' } },
    };
    // One attempt: without the wait, the first refusal would put it in the failed set for good.
    await extract.add(item.name, item.data, { ...jobOptionsFor(item), attempts: 1 });
    await eventually(
      async () => {
        const job = await extract.getJob('extract.r-away');
        expect(job?.attemptsStarted).toBeGreaterThanOrEqual(3);
        expect(job?.attemptsMade).toBe(0);
        expect(await job?.getState()).toBe('delayed');
      },
      { timeout: 20_000, interval: 250 },
    );

    memory = await startMemory({ REDIS_URL: redis.url }, { dataDir, port, healthPort });
    const client = memory.client(10_000);
    try {
      await eventually(async () => expect((await client.call(MemoryPattern.List, { pool: 'home' })).map((entry) => entry.content)).toEqual([FACT]), {
        timeout: 40_000,
        interval: 500,
      });
    } finally {
      await client.close();
    }
    const job = await extract.getJob('extract.r-away');
    expect(await job?.getState()).toBe('completed');
  }, 120_000);
});
