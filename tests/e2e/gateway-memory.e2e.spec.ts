import { JobName, QueueName } from '@engram/jobs';
import { Queue } from 'bullmq';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { contentText, startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import type { RecordedRequest } from '../support/scripted-http.js';
import { callTools, say, type ChatReply, type ChatRequestJson } from '../support/scripted-openai-upstream.js';
import { startGateway } from '../support/stack.js';

const MEMORY_TOOLS = ['store_memory', 'memory_search', 'memory_list', 'memory_update', 'memory_delete', 'memory_refresh'];
const LIMIT = 'No more memory searches this turn. Use what you have.';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/**
 * A scripted model that acts on commands in the last user message, and answers from the last
 * tool result once it has one, like a real model using its tools.
 */
function model(request: RecordedRequest, _index: number): ChatReply {
  const messages = (request.body as ChatRequestJson).messages;
  const last = messages[messages.length - 1];
  const user = contentText([...messages].reverse().find((message) => message.role === 'user')?.content);
  if (user.startsWith('CURATE') && last?.role === 'tool') {
    // Works through list, then update + refresh in one round, then delete, on the id the list cited.
    const results = messages.filter((message) => message.role === 'tool').map((message) => contentText(message.content));
    const id = /\[id:([^\]]+)\]/.exec(results[0] ?? '')?.[1] ?? 'missing';
    const step = results.length;
    if (step === 1) {
      return callTools(
        { name: 'memory_update', arguments: { id, content: 'The user drinks green tea now', confirmed: true } },
        { name: 'memory_refresh', arguments: { id } },
      );
    }
    if (step === 3) return callTools({ name: 'memory_delete', arguments: { id, reason: 'asked to forget' } });
    return say(`Done: ${results.join(' | ')}`);
  }
  if (user.startsWith('CURATE')) return callTools({ name: 'memory_list', arguments: { category: 'preference' } });
  if (last?.role === 'tool') {
    const result = contentText(last.content);
    if (user.startsWith('LOOP') && !result.includes(LIMIT))
      return callTools({ name: 'memory_search', arguments: { query: `attempt ${messages.length}` } });
    if (user.startsWith('STORE') || user.startsWith('NOTE')) return say('Noted.');
    return say(`Memory says: ${result}`);
  }
  if (user.startsWith('STORE '))
    return callTools({ name: 'store_memory', arguments: { content: user.slice(6), type: 'USER', category: 'preference' } });
  // A decision never reaches Tier 1, so that a later search lists it (Tier 1 entries are left out).
  if (user.startsWith('NOTE '))
    return callTools({ name: 'store_memory', arguments: { content: user.slice(5), type: 'MEMORY', category: 'decision' } });
  if (user.startsWith('RECALL ')) {
    return { kind: 'answer', text: 'Let me check. ', toolCalls: [{ name: 'memory_search', arguments: { query: user.slice(7) } }] };
  }
  if (user.startsWith('LOOP')) return callTools({ name: 'memory_search', arguments: { query: 'anything' } });
  if (user.startsWith('MIXED')) {
    return {
      kind: 'answer',
      toolCalls: [
        { name: 'memory_search', arguments: { query: 'weather' } },
        { name: 'get_weather', arguments: { city: 'Oslo' } },
      ],
    };
  }
  if (user.startsWith('MALFORMED')) return callTools({ name: 'memory_update', arguments: '{"id": ' });
  if (user.startsWith('SUGGEST')) {
    return say('', { chunks: ['Sure. <MEM', 'ORY_SUG', 'GEST>User likes', ' green tea</MEMORY_', 'SUGGEST> Anything else?'] });
  }
  return say('Plain answer.');
}

describe('gateway with memory (real memory service, scripted upstream, openai SDK)', () => {
  let stack: GatewayStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startGatewayStack({ responder: model });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const chatRequestsSince = (count: number): RecordedRequest<ChatRequestJson>[] => stack.upstream.chatRequests.slice(count);

  it('stores in one conversation and recalls in the next, streamed, without the client seeing a memory tool', async () => {
    const stored = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'NOTE The user drinks oolong tea every morning' }],
    });
    expect(stored.choices[0]?.message.content).toBe('Noted.');
    expect(stored.choices[0]?.message.tool_calls).toBeUndefined();
    expect(stored.choices[0]?.finish_reason).toBe('stop');

    const before = stack.upstream.chatRequests.length;
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'RECALL oolong' }],
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toMatch(/^Let me check\. Memory says: Found 1:\n\[id:[^\]]+\] The user drinks oolong tea every morning/);
    expect(chunks.some((chunk) => chunk.choices[0]?.delta.tool_calls)).toBe(false);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.role).length).toBe(1);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
    const usage = chunks[chunks.length - 1]?.usage;
    expect(usage?.total_tokens).toBeGreaterThan(0);

    const rounds = chatRequestsSince(before);
    expect(rounds).toHaveLength(2);
    const toolMessage = rounds[1]?.body.messages.at(-1);
    expect(toolMessage?.role).toBe('tool');
    expect(contentText(toolMessage?.content)).toContain('oolong');
  });

  it('injects Tier 1 into the client system prompt, keeps the client tools first and unknown fields as sent', async () => {
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'STORE The user prefers answers in French' }] });
    const before = stack.upstream.chatRequests.length;
    const body = {
      model: 'gpt-test',
      messages: [
        { role: 'system' as const, content: 'You are terse.' },
        { role: 'user' as const, content: 'hello' },
      ],
      tools: [weatherTool],
      tool_choice: 'auto' as const,
      metadata: { team: 'blue' },
      engram_unknown_field: { nested: [1, 2, 3] },
    };
    await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming);
    await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const [first, second] = chatRequestsSince(before);
    const system = contentText(first?.body.messages[0]?.content);
    expect(first?.body.messages[0]?.role).toBe('system');
    expect(system.startsWith('You are terse.\n\n<engram-memory>')).toBe(true);
    expect(system).toContain('The user prefers answers in French');
    expect(system).toContain('memory_search');
    expect(first?.body.tools?.map((tool) => tool.function.name)).toEqual(['get_weather', ...MEMORY_TOOLS]);
    expect(first?.body.tools?.[0]).toEqual(weatherTool);
    expect(first?.body['metadata']).toEqual({ team: 'blue' });
    expect(first?.body['engram_unknown_field']).toEqual({ nested: [1, 2, 3] });
    expect(first?.body['tool_choice']).toBe('auto');
    // Same memory state, same bytes: the provider's prompt cache stays warm.
    expect(JSON.stringify(second?.body.messages)).toBe(JSON.stringify(first?.body.messages));
    expect(JSON.stringify(second?.body.tools)).toBe(JSON.stringify(first?.body.tools));
  });

  it('caps the memory tool loop and lets the model answer', async () => {
    const before = stack.upstream.chatRequests.length;
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'LOOP forever' }] });
    let text = '';
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
      text += chunk.choices[0]?.delta.content ?? '';
    }
    const rounds = chatRequestsSince(before);
    // MEMORY_TOOL_MAX_ITERATIONS=3 rounds run, a fourth call is answered with the limit, then the model answers.
    expect(rounds).toHaveLength(5);
    expect(contentText(rounds[4]?.body.messages.at(-1)?.content)).toBe(LIMIT);
    expect(text).toBe(`Memory says: ${LIMIT}`);
  });

  it('returns only the client calls of a turn that mixes memory and client calls, streamed and not', async () => {
    const params = { model: 'gpt-test', tools: [weatherTool], messages: [{ role: 'user' as const, content: 'MIXED weather in Oslo?' }] };
    const plain = await client.chat.completions.create(params);
    expect(plain.choices[0]?.finish_reason).toBe('tool_calls');
    expect(plain.choices[0]?.message.tool_calls?.map((call) => call.type === 'function' && call.function.name)).toEqual(['get_weather']);

    const runner = client.chat.completions.stream(params);
    const final = await runner.finalChatCompletion();
    const calls = final.choices[0]?.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    expect(calls[0]?.type === 'function' && calls[0].function.name).toBe('get_weather');
    expect(calls[0]?.type === 'function' && JSON.parse(calls[0].function.arguments)).toEqual({ city: 'Oslo' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('answers a malformed memory call with a readable error the model sees', async () => {
    const before = stack.upstream.chatRequests.length;
    const answer = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'MALFORMED update' }] });
    const rounds = chatRequestsSince(before);
    expect(rounds).toHaveLength(2);
    expect(contentText(rounds[1]?.body.messages.at(-1)?.content)).toMatch(/^Error: the arguments of memory_update are not valid JSON/);
    expect(answer.choices[0]?.message.content).toContain('Memory says: Error:');
  });

  it('removes MEMORY_SUGGEST markers split across chunks and queues them for extraction', async () => {
    const stream = await client.chat.completions.create(
      { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'SUGGEST something' }] },
      { headers: { 'x-request-id': 'suggest-req-1' } },
    );
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Sure.  Anything else?');

    const queue = new Queue(QueueName.Extract, { connection: { url: stack.redis.url } });
    try {
      await eventually(async () => expect((await queue.getJobs(['waiting', 'delayed', 'prioritized'])).length).toBeGreaterThan(0), {
        timeout: 10_000,
      });
      const [job] = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
      expect(job?.name).toBe(JobName.ExtractExchange);
      expect(job?.data).toEqual({
        pool: 'default',
        suggestions: ['User likes green tea'],
        exchange: { user: 'SUGGEST something', assistant: 'Sure.  Anything else?' },
        requestId: 'suggest-req-1',
        exchangeId: expect.stringMatching(/^[0-9a-f]{32}$/),
      });
      // Named by the exchange, not by the request id the client chose.
      expect(job?.id).toBe(`extract.${(job?.data as { exchangeId: string }).exchangeId}`);
    } finally {
      await queue.close();
    }
  });

  it('lets the model list, update, refresh and soft-delete a memory, citing ids', async () => {
    const pool = 'curated';
    const curator = stack.client({ pool });
    await curator.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'STORE The user drinks black tea' }] });
    const answer = await curator.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'CURATE my preferences' }] });
    const text = answer.choices[0]?.message.content ?? '';
    const [listed, updated, refreshed, deleted] = text.replace(/^Done: /, '').split(' | ');
    const id = /\[id:([^\]]+)\]/.exec(listed ?? '')?.[1];
    expect(listed).toMatch(/^1 memories:\n\[id:[^\]]+\] The user drinks black tea/);
    expect(updated).toBe(`Updated [id:${id}] The user drinks green tea now`);
    expect(refreshed).toBe(`Refreshed [id:${id}] The user drinks green tea now`);
    expect(deleted).toBe(`Deleted [id:${id}] (archived; a person can restore it).`);

    const archived = (await (await fetch(`${stack.gateway.url}/engram/pools/${pool}/memories?archived=true`)).json()) as {
      data: { id: string; content: string; isArchived: boolean; isConfirmed: boolean }[];
    };
    expect(archived.data).toEqual([expect.objectContaining({ id, content: 'The user drinks green tea now', isArchived: true, isConfirmed: true })]);
    const events = (await (await fetch(`${stack.gateway.url}/engram/pools/${pool}/events?after=0`)).json()) as {
      data: { type: string; actor: string }[];
    };
    expect(events.data.filter((event) => event.type !== 'memory.referenced').every((event) => event.actor === 'llm')).toBe(true);
  });

  it('drops a cached Tier 1 when memory announces a change made elsewhere', async () => {
    const other = await startGateway({ UPSTREAM_BASE_URL: stack.upstream.baseUrl, REDIS_URL: stack.redis.url, ...(stack.memory?.clientEnv ?? {}) });
    try {
      const viaOther = new OpenAI({ baseURL: `${other.url}/pools/announced/v1`, apiKey: 'sk-client', maxRetries: 0 });
      const systemSeenUpstream = async (): Promise<string> => {
        await viaOther.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] });
        const first = stack.upstream.chatRequests.at(-1)?.body.messages[0];
        return first?.role === 'system' ? contentText(first.content) : '';
      };
      expect(await systemSeenUpstream()).toBe(''); // the other gateway now caches an empty Tier 1 for the pool
      const stored = await fetch(`${stack.gateway.url}/engram/pools/announced/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'The user is called Ada', type: 'USER', category: 'person' }),
      });
      expect(stored.status).toBe(201);
      // Well within the cache's 30 s safety TTL: only the announcement can explain the refresh.
      await eventually(async () => expect(await systemSeenUpstream()).toContain('The user is called Ada'), { timeout: 10_000, interval: 200 });
    } finally {
      await other.stop();
    }
  });

  it('with x-engram-memory: off forwards the request untouched', async () => {
    const before = stack.upstream.chatRequests.length;
    const body = { model: 'gpt-test', messages: [{ role: 'user' as const, content: 'hello' }], tools: [weatherTool], seed: 7 };
    const answer = await stack.client({ headers: { 'x-engram-memory': 'off' } }).chat.completions.create(body);
    expect(answer.choices[0]?.message.content).toBe('Plain answer.');
    const [forwarded] = chatRequestsSince(before);
    expect(forwarded?.body).toEqual(body);
  });
});
