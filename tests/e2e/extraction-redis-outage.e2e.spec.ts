import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { JobName, QueueName } from '@engram/jobs';
import { Queue } from 'bullmq';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { freePort } from '../support/ports.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { ScriptedOpenAiUpstream, say } from '../support/scripted-openai-upstream.js';
import { startGateway, startMemory, type RunningGateway, type RunningMemory } from '../support/stack.js';

/** A <MEMORY_SUGGEST> fact made while Redis is down is kept by memory and becomes a job once Redis is back. */
describe('extraction through a Redis outage', () => {
  let redis: TestRedis;
  let secondRedis: TestRedis | undefined;
  let upstream: ScriptedOpenAiUpstream;
  let memory: RunningMemory;
  let gateway: RunningGateway;

  beforeAll(async () => {
    redis = await startRedis({ port: await freePort() });
    upstream = await ScriptedOpenAiUpstream.start([say('Noted. <MEMORY_SUGGEST>The build server is in Oslo</MEMORY_SUGGEST>')]);
    memory = await startMemory({ REDIS_URL: redis.url });
    gateway = await startGateway({ UPSTREAM_BASE_URL: upstream.baseUrl, REDIS_URL: redis.url, MEMORY_RPC_TIMEOUT_MS: '2000', ...memory.clientEnv });
  });
  afterAll(async () => {
    await gateway?.stop();
    await memory?.stop();
    await upstream?.close();
    await secondRedis?.stop();
  });

  it('keeps the exchange on disk in memory and enqueues its extraction when Redis is back', async () => {
    await redis.stop();
    await eventually(
      async () => expect(((await (await fetch(`${gateway.url}/readyz`)).json()) as { checks: { redis: string } }).checks.redis).toBe('down'),
      {
        timeout: 10_000,
      },
    );
    const client = new OpenAI({ baseURL: `${gateway.url}/pools/ops/v1`, apiKey: 'sk-client', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Where is the build server?' }] });
    expect(answer.choices[0]?.message.content).toBe('Noted. ');

    const spool = join(memory.dataDir, 'spool', 'extract');
    const spooled = () => {
      try {
        return readdirSync(spool).filter((name) => name.endsWith('.json')).length;
      } catch {
        return 0;
      }
    };
    await eventually(() => expect(spooled()).toBe(1), { timeout: 10_000 });

    secondRedis = await startRedis({ port: redis.port });
    const extract = new Queue(QueueName.Extract, { connection: { url: secondRedis.url } });
    try {
      await eventually(
        async () =>
          expect((await extract.getJobs(['waiting', 'delayed'])).map((job) => [job.name, job.data.pool, job.data.suggestions])).toEqual([
            [JobName.ExtractExchange, 'ops', ['The build server is in Oslo']],
          ]),
        { timeout: 15_000 },
      );
      await eventually(() => expect(spooled()).toBe(0), { timeout: 10_000 });
    } finally {
      await extract.close();
    }
  });
});
