import { MemoryPattern, readInternalToken } from '@engram/contracts';
import { DECAY_SCHEDULER_ID, exchangeIdOf, JobName, QueueName } from '@engram/jobs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { startWorker } from '../support/stack.js';
import { startWorkerStack, type WorkerStack } from './worker-stack.js';

const user = 'user' as const;
const DAY = 86_400_000;

describe('worker jobs against the real memory service', () => {
  let stack: WorkerStack;

  beforeAll(async () => {
    stack = await startWorkerStack({
      memoryEnv: { CONSOLIDATION_THRESHOLD: '5' },
      workerEnv: { CONSOLIDATION_THRESHOLD: '5', DECAY_EVERY_MS: '3600000' },
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('categorizes an entry stored without a category, as worker:categorize caused by the stored event', async () => {
    const pool = 'categorize';
    const entry = await stack.client.call(MemoryPattern.Store, { pool, actor: user, content: 'The Docker daemon crashed on M1 after sleep' });
    expect(entry.category).toBeNull();
    await eventually(async () => expect((await stack.client.call(MemoryPattern.Get, { pool, id: entry.id })).category).toBe('gotcha'), {
      timeout: 15_000,
    });
    const events = await stack.events(pool);
    const stored = events.find((event) => event.type === 'memory.stored');
    expect(events.filter((event) => event.type === 'memory.categorized')).toEqual([
      expect.objectContaining({ actor: 'worker:categorize', causationId: stored?.id, data: { id: entry.id, category: 'gotcha' } }),
    ]);
  });

  it('leaves the same state when a job is delivered twice', async () => {
    const pool = 'duplicate';
    const entry = await stack.client.call(MemoryPattern.Store, { pool, actor: user, content: 'User prefers concise answers' });
    await eventually(async () => expect((await stack.client.call(MemoryPattern.Get, { pool, id: entry.id })).category).toBe('preference'), {
      timeout: 15_000,
    });
    const before = await stack.events(pool);
    const stored = before.find((event) => event.type === 'memory.stored');
    const data = { pool, memoryId: entry.id, eventId: stored?.id ?? 'missing' };

    // The producer re-drives the same event: BullMQ keeps one job for one id.
    const again = await stack.enqueue({ name: JobName.CategorizeEntry, data });
    expect(again.id).toBe(`categorize.${data.eventId}`);
    // A redelivery under another id (as after a crash between the write and the ack) runs again, harmlessly.
    const redelivered = await stack.enqueue({ name: JobName.CategorizeEntry, data }, { jobId: `redelivery-${entry.id}` });
    expect(await stack.finished(redelivered)).toEqual({ outcome: 'already-categorized' });
    expect(await stack.events(pool)).toEqual(before);
  });

  it('archives entries decayed below 0.3 at an injected time, keeps them restorable, and does it once', async () => {
    const pool = 'decay';
    const project = await stack.client.call(MemoryPattern.Store, { pool, actor: user, content: 'The API runs on Fastify', category: 'project' });
    const gotcha = await stack.client.call(MemoryPattern.Store, { pool, actor: user, content: 'Flaky test on CI', category: 'gotcha' });
    const now = Date.now();

    // 30 days on: 0.95^30 = 0.21 archives the project fact; 0.98^30 = 0.55 keeps the gotcha.
    const asOf = new Date(now + 30 * DAY).toISOString();
    const sweep = await stack.enqueue({ name: JobName.DecaySweep, data: { pool, asOf } });
    expect(await stack.finished(sweep)).toMatchObject({ asOf, archived: [project.id] });

    const archived = await stack.client.call(MemoryPattern.List, { pool, archived: true });
    expect(archived.map((entry) => entry.id)).toEqual([project.id]);
    const events = await stack.events(pool);
    expect(events.filter((event) => event.type === 'memory.archived')).toEqual([
      expect.objectContaining({ actor: 'worker:decay', causationId: sweep.id, data: expect.objectContaining({ id: project.id }) }),
    ]);

    // The same sweep again archives nothing more.
    const rerun = await stack.enqueue({ name: JobName.DecaySweep, data: { pool, asOf } }, { jobId: 'decay-rerun' });
    expect(await stack.finished(rerun)).toMatchObject({ archived: [] });

    // Archived, not lost: a person can restore it.
    const restored = await stack.client.call(MemoryPattern.Restore, { pool, actor: user, id: project.id });
    expect(restored.isArchived).toBe(false);
    expect((await stack.client.call(MemoryPattern.Get, { pool, id: gotcha.id })).isArchived).toBe(false);
  });

  it('schedules the decay sweep of every pool with a BullMQ job scheduler', async () => {
    const scheduler = await stack.queue(QueueName.Decay).getJobScheduler(DECAY_SCHEDULER_ID);
    expect(scheduler).toMatchObject({ every: 3_600_000, name: JobName.DecaySweep });
  });

  it('extracts suggestions: stores new facts and refreshes one the pool already holds', async () => {
    const pool = 'extract';
    const known = await stack.client.call(MemoryPattern.Store, { pool, actor: user, content: 'The user prefers tabs over spaces' });
    const exchange = {
      pool,
      suggestions: ['User prefers tabs over spaces.', 'The staging database is read-only'],
      exchange: { user: 'Set up the editor please', assistant: 'Done.' },
      requestId: 'req-extract-1',
    };
    const data = { ...exchange, exchangeId: exchangeIdOf(exchange) };
    const job = await stack.enqueue({ name: JobName.ExtractExchange, data });
    const outcome = (await stack.finished(job)) as { stored: string[]; refreshed: string[] };
    expect(outcome.refreshed).toEqual([known.id]);
    expect(outcome.stored).toHaveLength(1);
    const active = await stack.client.call(MemoryPattern.List, { pool });
    expect(active.map((entry) => entry.content).sort()).toEqual(['The staging database is read-only', 'The user prefers tabs over spaces']);
    expect((await stack.client.call(MemoryPattern.Get, { pool, id: known.id })).referenceCount).toBe(1);

    // A finished job no longer holds the conversation; run again, it stores and refreshes nothing.
    const before = await stack.events(pool);
    await job.retry('completed');
    expect(await stack.finished(job)).toMatchObject({ stored: [], refreshed: [] });
    expect(await stack.events(pool)).toEqual(before);
    expect(JSON.stringify((await stack.queue(QueueName.Extract).getJob(job.id!))?.data)).not.toMatch(/staging|tabs|editor/i);
  });

  it('consolidates near-duplicates deterministically once a pool passes the threshold, losing nothing', async () => {
    const pool = 'crowded';
    const contents = [
      'The project uses SQLite for storage',
      'Deploys go through GitHub Actions',
      'User prefers concise answers',
      'project uses SQLite for its storage.',
      'The frontend is written in Svelte',
      'Logs are shipped to Loki',
    ];
    const ids: string[] = [];
    for (const content of contents) {
      ids.push((await stack.client.call(MemoryPattern.Store, { pool, actor: user, content, type: 'MEMORY' })).id);
    }
    await eventually(async () => expect((await stack.client.call(MemoryPattern.List, { pool })).length).toBe(5), { timeout: 20_000 });
    const active = await stack.client.call(MemoryPattern.List, { pool });
    const merged = active.find((entry) => entry.supersedes.length > 0);
    expect(merged?.supersedes).toEqual([ids[0], ids[3]]);
    expect(merged?.content).toBe('project uses SQLite for its storage.');
    for (const id of ids) expect(active.some((entry) => entry.id === id || entry.supersedes.includes(id))).toBe(true);
    const archived = await stack.client.call(MemoryPattern.List, { pool, archived: true });
    expect(archived.map((entry) => [entry.id, entry.supersededBy])).toEqual(
      expect.arrayContaining([
        [ids[0], merged?.id],
        [ids[3], merged?.id],
      ]),
    );
    const consolidated = (await stack.events(pool)).filter((event) => event.type === 'memory.consolidated');
    expect(consolidated).toEqual([
      expect.objectContaining({ actor: 'worker:consolidate', data: expect.objectContaining({ model: 'deterministic' }) }),
    ]);
  });

  it('keeps a job that keeps failing in the failed set, where an operator sees it and retries it', async () => {
    const job = await stack.enqueue(
      { name: JobName.CategorizeEntry, data: { pool: 'Not A Pool', memoryId: 'x', eventId: 'ev-bad' } },
      { jobId: 'categorize-bad-pool', attempts: 1 },
    );
    await expect(stack.finished(job)).rejects.toThrow(/pool/);
    const health = `http://127.0.0.1:${stack.worker.healthPort}`;
    const operator = { authorization: `Bearer ${readInternalToken(stack.memory.dataDir)!}` };
    for (const headers of [{}, { authorization: 'Bearer guessed' }] as Record<string, string>[]) {
      expect((await fetch(`${health}/queues`, { headers })).status).toBe(401);
      const refused = await fetch(`${health}/queues/${QueueName.Categorize}/retry-failed`, { method: 'POST', headers });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: expect.objectContaining({ code: 'invalid_api_key' }) });
    }
    const counts = (await (await fetch(`${health}/queues`, { headers: operator })).json()) as Record<string, { failed: number }>;
    expect(counts[QueueName.Categorize]?.failed).toBe(1);
    const retry = await fetch(`${health}/queues/${QueueName.Categorize}/retry-failed`, { method: 'POST', headers: operator });
    expect(await retry.json()).toEqual({ queue: QueueName.Categorize, retried: 1 });
    await eventually(async () => expect((await stack.queue(QueueName.Categorize).getJob('categorize-bad-pool'))?.attemptsMade).toBe(2), {
      timeout: 10_000,
    });
  });

  it('serves only the queues WORKER_QUEUES names, and refuses to boot on an unknown one', async () => {
    const decayOnly = await startWorker({ ...stack.workerEnv, WORKER_QUEUES: QueueName.Decay });
    try {
      const operator = { authorization: `Bearer ${readInternalToken(stack.memory.dataDir)!}` };
      const counts = (await (await fetch(`http://127.0.0.1:${decayOnly.healthPort}/queues`, { headers: operator })).json()) as Record<
        string,
        unknown
      >;
      expect(Object.keys(counts)).toEqual([QueueName.Decay]);
    } finally {
      await decayOnly.stop();
    }
    await expect(startWorker({ ...stack.workerEnv, WORKER_QUEUES: 'engram-decay,no-such-queue' }, { timeoutMs: 10_000 })).rejects.toThrow(
      /unknown queues: no-such-queue/,
    );
  });

  it('is ready when redis and memory answer', async () => {
    const ready = await fetch(`http://127.0.0.1:${stack.worker.healthPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { redis: { status: 'up' }, memory: { status: 'up' } } });
  });
});
