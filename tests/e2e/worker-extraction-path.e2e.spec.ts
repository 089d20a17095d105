import { type MemoryClient, MemoryPattern } from '@engram/contracts';
import { QueueName } from '@engram/jobs';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import { say } from '../support/scripted-openai-upstream.js';
import { startWorker, type RunningWorker } from '../support/stack.js';

/** The whole path: a model's marker, through the gateway and the extraction queue, becomes a memory. */
describe('a <MEMORY_SUGGEST> marker becomes a memory through gateway, queue and worker', () => {
  let stack: GatewayStack;
  let worker: RunningWorker;
  let memory: MemoryClient;

  beforeAll(async () => {
    stack = await startGatewayStack({
      responder: (request) => {
        const said = JSON.stringify(request.body).match(/SUGGEST ([^"]+)"/)?.[1];
        if (said) return say(`Noted. <MEMORY_SUGGEST>${said}</MEMORY_SUGGEST>`);
        return say('Noted, I will not write there. <MEMORY_SUGGEST>The staging database is read-only</MEMORY_SUGGEST>');
      },
    });
    if (!stack.memory) throw new Error('memory service expected');
    worker = await startWorker({ REDIS_URL: stack.redis.url, ...stack.memory.clientEnv, CONSOLIDATION_MODEL: 'off' });
    memory = stack.memory.client(10_000);
  });

  afterAll(async () => {
    await memory?.close();
    await worker?.stop();
    await stack?.stop();
  });

  it('stores the suggestion in the request pool, as worker:extract, once', async () => {
    const answer = await stack.client({ pool: 'team' }).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Can I run migrations against staging?' }],
    });
    expect(answer.choices[0]?.message.content).not.toContain('MEMORY_SUGGEST');

    await eventually(
      async () =>
        expect((await memory.call(MemoryPattern.List, { pool: 'team' })).map((entry) => [entry.content, entry.source])).toEqual([
          ['The staging database is read-only', 'marker'],
        ]),
      {
        timeout: 20_000,
      },
    );
    const events = await memory.call(MemoryPattern.EventsAfter, { after: 0, pool: 'team' });
    expect(events.filter((event) => event.type === 'memory.stored')).toEqual([expect.objectContaining({ actor: 'worker:extract' })]);

    // The finished job stays in Redis for a day, without the conversation it no longer needs.
    const extract = new Queue(QueueName.Extract, { connection: { url: stack.redis.url } });
    try {
      const [finished] = await eventually(
        async () => {
          const completed = await extract.getJobs(['completed']);
          expect(completed).toHaveLength(1);
          return completed;
        },
        { timeout: 10_000 },
      );
      expect(finished?.data).toMatchObject({ pool: 'team', suggestions: [], exchange: { user: '', assistant: '' } });
      expect(JSON.stringify(finished?.data)).not.toMatch(/staging|migrations/i);
    } finally {
      await extract.close();
    }
  });

  it('extracts every exchange a client sent under one x-request-id, in one pool and across pools', async () => {
    const chat = (pool: string, fact: string) =>
      stack
        .client({ pool, headers: { 'x-request-id': 'client-chosen-id' } })
        .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `SUGGEST ${fact}` }] });
    await chat('xa', 'The user drinks green tea');
    await chat('xa', 'The user bikes to work');
    await chat('xb', 'The user drinks green tea');
    const contents = async (pool: string) => (await memory.call(MemoryPattern.List, { pool })).map((entry) => entry.content).sort();
    await eventually(async () => expect(await contents('xa')).toEqual(['The user bikes to work', 'The user drinks green tea']), { timeout: 20_000 });
    await eventually(async () => expect(await contents('xb')).toEqual(['The user drinks green tea']), { timeout: 20_000 });
  });
});
