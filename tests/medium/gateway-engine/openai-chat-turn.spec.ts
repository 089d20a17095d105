import { describe, expect, it } from '@jest/globals';
import { exchangeIdOf } from '@engram/jobs';
import { MEMORY_LIMIT_MESSAGE, OpenAiChatAdapter, type ChatRequest, type UpstreamPort, type UpstreamReply } from '@engram/gateway-engine';
import { MemoryPattern } from '@engram/contracts';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { runEngineTurn } from '../../support/engine-turn.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

/** The engine's turn loop with the OpenAI Chat adapter, its memory tools answered by the real memory service. */

// ---- scripted model replies, shaped like api.openai.com's ----

interface Script {
  readonly text?: string[];
  readonly calls?: { id: string; name: string; args: string }[];
  readonly finish?: string;
  readonly usage?: number;
}

function streamOf(script: Script, id: string): string {
  const base = { id, object: 'chat.completion.chunk', created: 1, model: 'm' };
  const frames: unknown[] = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: script.text ? '' : null }, finish_reason: null }] },
  ];
  for (const piece of script.text ?? []) frames.push({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  (script.calls ?? []).forEach((call, index) => {
    frames.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
          finish_reason: null,
        },
      ],
    });
    for (let i = 0; i < call.args.length; i += 5) {
      frames.push({
        ...base,
        choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: call.args.slice(i, i + 5) } }] }, finish_reason: null }],
      });
    }
  });
  frames.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: script.finish ?? (script.calls ? 'tool_calls' : 'stop') }] });
  if (script.usage)
    frames.push({ ...base, choices: [], usage: { prompt_tokens: script.usage, completion_tokens: 1, total_tokens: script.usage + 1 } });
  return `${frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`).join('')}data: [DONE]\n\n`;
}

function completionOf(script: Script, id: string): string {
  const calls = script.calls?.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }));
  return JSON.stringify({
    id,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: script.text ? script.text.join('') : null, ...(calls ? { tool_calls: calls } : {}) },
        finish_reason: script.finish ?? (calls ? 'tool_calls' : 'stop'),
      },
    ],
    usage: { prompt_tokens: script.usage ?? 10, completion_tokens: 1, total_tokens: (script.usage ?? 10) + 1 },
  });
}

/** An upstream that answers each call with the next script, in small network chunks, and records request bodies. */
function scriptedUpstream(scripts: Script[]): UpstreamPort & { bodies: ChatRequest[] } {
  const bodies: ChatRequest[] = [];
  return {
    bodies,
    post: async (_path, body): Promise<UpstreamReply> => {
      const request = JSON.parse(String(body)) as ChatRequest;
      bodies.push(request);
      const script = scripts[bodies.length - 1] ?? { text: ['(no script)'] };
      const text = request.stream ? streamOf(script, `chatcmpl-${bodies.length}`) : completionOf(script, `chatcmpl-${bodies.length}`);
      const bytes = new TextEncoder().encode(text);
      return {
        status: 200,
        headers: { 'content-type': request.stream ? 'text/event-stream' : 'application/json' },
        body: (async function* () {
          for (let i = 0; i < bytes.length; i += 37) yield bytes.slice(i, i + 37);
        })(),
      };
    },
  };
}

const under = memoryServicePerTest();
const memory = memoryInProcess(() => under.service);
const entries = async () => (await memory.call(MemoryPattern.List, { pool: 'p', limit: 100 })).map((entry) => entry.content);

async function run(request: ChatRequest, scripts: Script[], maxIterations = 3) {
  const upstream = scriptedUpstream(scripts);
  const { sink, jobs } = await runEngineTurn(new OpenAiChatAdapter(), request, {
    upstream,
    memory,
    tier1Block: '<engram-memory>\nfacts\n</engram-memory>',
    pool: 'p',
    requestId: 'req-1',
    maxIterations,
  });
  const frames = sink.body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice(6));
  const chunks = frames
    .filter((data) => data !== '[DONE]')
    .map(
      (data) =>
        JSON.parse(data) as {
          id: string;
          choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
          usage?: { total_tokens: number };
        },
    );
  const text = chunks.map((chunk) => String(chunk.choices[0]?.delta['content'] ?? '')).join('');
  return { upstream, jobs, sink, frames, chunks, text };
}

const search = (query: string, id = 'call_m') => ({ id, name: 'memory_search', args: JSON.stringify({ query }) });
const user = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content }], ...extra });

describe('runTurn with the OpenAI Chat adapter, streaming', () => {
  it('runs a memory round and streams on in the same response, memory hidden', async () => {
    const { upstream, chunks, text, frames } = await run(user('what shell?', { stream: true, stream_options: { include_usage: true } }), [
      { text: ['Let me look. '], calls: [search('shell')], usage: 100 },
      { text: ['You use ', 'zsh.'], usage: 200 },
    ]);
    expect(text).toBe('Let me look. You use zsh.');
    expect(chunks.every((chunk) => chunk.id === 'chatcmpl-1')).toBe(true);
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta['role']).length).toBe(1);
    expect(chunks.some((chunk) => chunk.choices[0]?.delta['tool_calls'])).toBe(false);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
    expect(chunks.at(-1)?.usage?.total_tokens).toBe(302);
    expect(frames.at(-1)).toBe('[DONE]');
    expect(upstream.bodies[1]?.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: 'Let me look. ',
        tool_calls: [{ id: 'call_m', type: 'function', function: { name: 'memory_search', arguments: '{"query":"shell"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_m', content: 'No memories match "shell".' },
    ]);
  });

  it('keeps client calls, renumbered, and drops memory calls in a mixed turn', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: {} } }];
    const { upstream, chunks } = await run(user('store and weather', { stream: true, tools }), [
      {
        calls: [
          { id: 'c1', name: 'store_memory', args: '{"content":"likes rain"}' },
          { id: 'c2', name: 'get_weather', args: '{"city":"Oslo"}' },
        ],
      },
    ]);
    const toolDeltas = chunks.flatMap(
      (chunk) =>
        (chunk.choices[0]?.delta['tool_calls'] as { index: number; id?: string; function: { name?: string; arguments?: string } }[] | undefined) ??
        [],
    );
    expect(toolDeltas.every((delta) => delta.index === 0)).toBe(true);
    expect(toolDeltas[0]).toMatchObject({ id: 'c2', function: { name: 'get_weather' } });
    expect(toolDeltas.map((delta) => delta.function.arguments ?? '').join('')).toBe('{"city":"Oslo"}');
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
    expect(await entries()).toEqual(['likes rain']);
    expect(upstream.bodies).toHaveLength(1);
  });

  it('caps the rounds, tells the model, and finishes with stop even if it insists', async () => {
    const { upstream, text, chunks } = await run(
      user('loop', { stream: true }),
      [{ calls: [search('a', 'c1')] }, { calls: [search('b', 'c2')] }, { calls: [search('c', 'c3')] }, { calls: [search('d', 'c4')] }],
      2,
    );
    expect(upstream.bodies).toHaveLength(4);
    expect(upstream.bodies[3]?.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'c3', content: MEMORY_LIMIT_MESSAGE });
    expect(text).toBe('');
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
  });

  it('strips markers split across chunks and hands them to extraction', async () => {
    const { text, jobs } = await run(user('hi', { stream: true }), [{ text: ['Ok <MEMORY', '_SUGGEST>uses ', 'vim</MEMORY_SUG', 'GEST>done'] }]);
    expect(text).toBe('Ok done');
    const exchange = { pool: 'p', suggestions: ['uses vim'], exchange: { user: 'hi', assistant: 'Ok done' }, requestId: 'req-1' };
    expect(jobs).toEqual([{ ...exchange, exchangeId: exchangeIdOf(exchange) }]);
  });
});

describe('runTurn with the OpenAI Chat adapter, not streaming', () => {
  it('answers with one ordinary completion: text of all rounds, summed usage, memory hidden', async () => {
    const { sink, upstream } = await run(user('remember I use zsh'), [
      { text: ['Saving. '], calls: [{ id: 'c1', name: 'store_memory', args: '{"content":"uses zsh","type":"USER"}' }], usage: 10 },
      { text: ['Done <MEMORY_SUGGEST>x</MEMORY_SUGGEST>.'], usage: 20 },
    ]);
    const body = JSON.parse(sink.body) as {
      id: string;
      choices: { message: { content: string; tool_calls?: unknown }; finish_reason: string }[];
      usage: { total_tokens: number };
    };
    expect(sink.status).toBe(200);
    expect(body.id).toBe('chatcmpl-1');
    expect(body.choices[0]?.message.content).toBe('Saving. Done .');
    expect(body.choices[0]?.message.tool_calls).toBeUndefined();
    expect(body.choices[0]?.finish_reason).toBe('stop');
    expect(body.usage.total_tokens).toBe(32);
    expect(await entries()).toEqual(['uses zsh']);
    expect(upstream.bodies[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: expect.stringMatching(/^Stored \[id:[a-z0-9-]+\] uses zsh$/),
    });
  });

  it('answers malformed and failing memory calls with readable errors', async () => {
    const { upstream } = await run(user('x'), [
      {
        calls: [
          { id: 'c1', name: 'memory_delete', args: '{"id":' },
          { id: 'c2', name: 'memory_delete', args: '{"id":"nope"}' },
          { id: 'c3', name: 'memory_search', args: '{"limit":"many"}' },
        ],
      },
      { text: ['ok'] },
    ]);
    const results = upstream.bodies[1]?.messages.slice(-3).map((message) => String(message.content));
    expect(results?.[0]).toMatch(/^Error: the arguments of memory_delete are not valid JSON/);
    expect(results?.[1]).toMatch(/^Error: memory nope not found/);
    expect(results?.[2]).toMatch(/^Error: invalid arguments for memory_search \(query: .*limit: /);
  });
});
