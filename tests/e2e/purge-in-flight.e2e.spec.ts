import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryPattern, type MemoryClient } from '@engram/contracts';
import { exchangeIdOf, QueueName } from '@engram/jobs';
import { Queue } from 'bullmq';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { freePort } from '../support/ports.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { ScriptedOpenAiUpstream, say } from '../support/scripted-openai-upstream.js';
import { startGateway, startMemory, startWorker, type RunningGateway, type RunningMemory, type RunningWorker } from '../support/stack.js';

const SECRET = 'the user secret is W';

/**
 * The probe's reproduction: Redis down, a chat suggests a fact, a person stores the same text and
 * purges it, Redis comes back. Every copy of the exchange still in flight (the spool, a late spool
 * call, the client retrying its chat) reaches extraction after the purge, and none may store the text.
 */
describe('a purge wins over every copy of an exchange still in flight', () => {
  let redis: TestRedis;
  let secondRedis: TestRedis | undefined;
  let upstream: ScriptedOpenAiUpstream;
  let memory: RunningMemory;
  let gateway: RunningGateway;
  let worker: RunningWorker | undefined;
  let rpc: MemoryClient;

  beforeAll(async () => {
    redis = await startRedis({ port: await freePort() });
    // The model words the fact its own way on the retried turn (punctuation only: the same fact).
    upstream = await ScriptedOpenAiUpstream.start((_request, index) =>
      say(`Noted. <MEMORY_SUGGEST>${index === 0 ? SECRET : 'The user-secret is W.'}</MEMORY_SUGGEST>`),
    );
    memory = await startMemory({ REDIS_URL: redis.url });
    gateway = await startGateway({ UPSTREAM_BASE_URL: upstream.baseUrl, REDIS_URL: redis.url, MEMORY_RPC_TIMEOUT_MS: '2000', ...memory.clientEnv });
    rpc = memory.client(10_000);
  });
  afterAll(async () => {
    await rpc?.close();
    await worker?.stop();
    await gateway?.stop();
    await memory?.stop();
    await upstream?.close();
    await secondRedis?.stop();
  });

  it('stores nothing of the purged text, whichever copy reaches extraction after the purge', async () => {
    await redis.stop();
    await eventually(
      async () => expect(((await (await fetch(`${gateway.url}/readyz`)).json()) as { checks: { redis: string } }).checks.redis).toBe('down'),
      { timeout: 10_000 },
    );
    const client = new OpenAI({ baseURL: `${gateway.url}/pools/ops/v1`, apiKey: 'sk-client', maxRetries: 0 });
    const chat = () => client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'SUGGEST my secret' }] });
    await chat();
    const spool = join(memory.dataDir, 'spool', 'extract');
    const spooled = () => {
      try {
        return readdirSync(spool).filter((name) => name.endsWith('.json')).length;
      } catch {
        return 0;
      }
    };
    await eventually(() => expect(spooled()).toBe(1), { timeout: 10_000 });

    // The person stores the same text by hand, then purges it.
    const rest = `${gateway.url}/engram/pools/ops/memories`;
    const created = await fetch(rest, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: SECRET }) });
    const { id } = (await created.json()) as { id: string };
    expect((await fetch(`${rest}/${id}?purge=true`, { method: 'DELETE' })).status).toBe(200);

    // A copy arriving after the purge: the gateway's spool call for another exchange saying the same
    // (the purge's own sweep of spool and queue looks for the text as written, and misses this spelling).
    const late = {
      pool: 'ops',
      suggestions: ["the user secret is 'W'"],
      exchange: { user: 'SUGGEST it again', assistant: 'Noted. ' },
      requestId: 'late-1',
    };
    await rpc.call(MemoryPattern.SpoolExtraction, { ...late, exchangeId: exchangeIdOf(late) });

    secondRedis = await startRedis({ port: redis.port });
    worker = await startWorker({ REDIS_URL: secondRedis.url, ...memory.clientEnv, CONSOLIDATION_MODEL: 'off' });
    // And the client retrying its chat once Redis is back: a job straight into the queue.
    await chat();

    const extract = new Queue(QueueName.Extract, { connection: { url: secondRedis.url } });
    try {
      await eventually(
        async () => {
          const finished = await extract.getJobs(['completed', 'failed']);
          expect(finished.map((job) => [job.finishedOn !== undefined, job.failedReason])).toEqual([
            [true, undefined],
            [true, undefined],
          ]);
          expect(finished.map((job) => (job.returnvalue as { purged: number }).purged)).toEqual([1, 1]);
        },
        { timeout: 30_000 },
      );
    } finally {
      await extract.close();
    }
    expect(spooled()).toBe(0);
    expect(await rpc.call(MemoryPattern.List, { pool: 'ops' })).toEqual([]);
    const events = await rpc.call(MemoryPattern.EventsAfter, { after: 0, pool: 'ops' });
    expect(events.filter((event) => event.type === 'memory.stored' && event.actor === 'worker:extract')).toEqual([]);
  });
});
