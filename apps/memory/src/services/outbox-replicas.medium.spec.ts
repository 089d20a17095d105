import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '@engram/config';
import { QueueName } from '@engram/jobs';
import { openMemoryService, type MemoryService } from '@engram/memory-store';
import { eventually, recordingLogger, silentLogger, startPostgres, tempDataDir, type TestDatabase, type TestPostgres } from '@engram/testing';
import { ChangePublisherRepository } from '../repositories/change-publisher.repository.js';
import { JobQueueRepository } from '../repositories/job-queue.repository.js';
import { OutboxService } from './outbox.service.js';
import { startRedis, type TestRedis } from '../../../../tests/support/redis.js';

/**
 * Every replica's outbox turns every event it applies (its own and the ones it copies from the table)
 * into jobs, so two replicas enqueue each job twice: the job ids, derived from event ids, make it one.
 */
let redis: TestRedis;
let server: TestPostgres;
let database: TestDatabase;
let dir: ReturnType<typeof tempDataDir>;

beforeAll(async () => {
  [redis, server] = await Promise.all([startRedis(), startPostgres()]);
  database = await server.database();
  dir = tempDataDir();
});
afterAll(async () => {
  await database.drop();
  await Promise.all([redis.stop(), server.stop()]);
  dir.remove();
});

describe('jobs of events applied by two memory replicas', () => {
  it('are enqueued once each', async () => {
    const config = loadConfig({ REDIS_URL: redis.url });
    const started: { service: MemoryService; outbox: OutboxService; queues: JobQueueRepository; connection: Redis }[] = [];
    for (const name of ['a', 'b']) {
      const service = await openMemoryService({
        dataDir: join(dir.path, name),
        tier1MaxChars: 400,
        logger: silentLogger(),
        eventStore: { url: database.url, pollMs: 100 },
      });
      const connection = new Redis(redis.url);
      const queues = new JobQueueRepository(config);
      const outbox = new OutboxService(service, service.commits, queues, new ChangePublisherRepository(connection), config, recordingLogger().logger);
      outbox.onApplicationBootstrap();
      started.push({ service, outbox, queues, connection });
    }
    const [a, b] = started.map((replica) => replica.service) as [MemoryService, MemoryService];
    const stored = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).store({ pool: 'team', actor: 'user', content: `uncategorised fact ${i}` })),
    );
    const queue = new Queue(QueueName.Categorize, { connection: { url: redis.url } });
    try {
      // Both outboxes have dispatched every event (each replica applied all 40).
      await eventually(() => {
        for (const { service } of started) expect(service.dispatchedSeq()).toBe(40);
      });
      const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed']);
      expect(jobs).toHaveLength(40);
      expect(jobs.map((job) => (job.data as { memoryId: string }).memoryId).sort()).toEqual(stored.map((entry) => entry.id).sort());
    } finally {
      await queue.close();
      for (const { service, outbox, queues, connection } of started) {
        outbox.onModuleDestroy();
        await queues.onModuleDestroy();
        await service.close();
        connection.disconnect();
      }
    }
  });
});
