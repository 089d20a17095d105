import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import {
  AnthropicMessagesAdapter,
  ApiKeys,
  MEMORY_TOOLS,
  MemoryToolExecutor,
  OpenAiChatAdapter,
  GatewayTier1Cache,
  upstreamError,
  type AnthropicRequest,
  type ChatRequest,
  type ClientSink,
  type ExtractionPort,
  type UpstreamReply,
} from '@engram/gateway-engine';
import type { ExtractExchangeData } from '@engram/jobs';
import { recordingLogger } from '@engram/testing';
import { memoryServicePerTest } from '../../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess, observed } from '../../../../tests/support/memory-in-process.js';
import type { ClientCall } from '../http/client-call.js';
import type { ErrorKind, MetricsRepository } from '../repositories/metrics.repository.js';
import type { UpstreamRepository } from '../repositories/upstream.repository.js';
import { AccessService } from './access.service.js';
import { MemoryGate } from './memory-gate.service.js';
import { MemoryInjection } from './memory-injection.js';
import type { Surface } from './surface-request.js';
import { TurnService } from './turn.service.js';

/** The real memory service; memory down is that service stopped (closed). */
const under = memoryServicePerTest();
const live = memoryInProcess(() => under.service);
const tier1Of = async (pool: string): Promise<string> => (await live.call(MemoryPattern.Tier1, { pool })).block;

type Reply = { readonly status?: number; readonly json: unknown } | { readonly fails: unknown };

/** The upstream model: answers each POST with the next scripted reply and records what it was sent. */
class ScriptedUpstream implements Pick<UpstreamRepository, 'forClient'> {
  readonly sent: { path: string; body: string }[] = [];
  constructor(private readonly replies: Reply[]) {}

  forClient(): ReturnType<UpstreamRepository['forClient']> {
    const post = (path: string, body: string | Uint8Array): Promise<UpstreamReply> => {
      this.sent.push({ path, body: typeof body === 'string' ? body : Buffer.from(body).toString('utf8') });
      const reply = this.replies.shift() ?? { fails: upstreamError(502, 'the upstream could not be reached: connect ECONNREFUSED') };
      if ('fails' in reply) return Promise.reject(reply.fails);
      const bytes = new TextEncoder().encode(JSON.stringify(reply.json));
      return Promise.resolve({
        status: reply.status ?? 200,
        headers: { 'content-type': 'application/json' },
        body: (async function* () {
          yield bytes;
        })(),
      });
    };
    return { post, forward: () => Promise.reject(new Error('not scripted')) };
  }

  sentJson(index: number): { messages: { role: string; content: unknown }[]; tools?: { function: { name: string } }[] } {
    return JSON.parse(this.sent[index]?.body ?? 'null');
  }
}

/** The gateway's metrics, as counts a test can read. */
class RecordingMetrics implements Pick<MetricsRepository, 'request' | 'upstreamSeconds' | 'memoryRound' | 'tier1Injected' | 'error'> {
  readonly requests: [string, number][] = [];
  readonly errors: ErrorKind[] = [];
  memoryRounds = 0;
  tier1Chars = 0;
  request = (route: string, status: number): void => void this.requests.push([route, status]);
  upstreamSeconds = (): void => undefined;
  memoryRound = (): void => void this.memoryRounds++;
  tier1Injected = (chars: number): void => void (this.tier1Chars += chars);
  error = (kind: ErrorKind): void => void this.errors.push(kind);
}

/** A client's request as the controller hands it over, answered into memory. */
function clientCall(body: unknown, headers: Record<string, string> = {}) {
  const answer = { status: 0, body: '' };
  let finished: (status: number) => void = () => undefined;
  const sink: ClientSink = {
    signal: new AbortController().signal,
    started: false,
    respond(status, _headers, bytes) {
      answer.status = status;
      answer.body = typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');
      finished(status);
    },
    startStream: () => undefined,
    write: () => Promise.resolve(),
    end: () => undefined,
    abort: () => undefined,
  };
  const call: ClientCall = {
    id: 'req-1',
    method: 'POST',
    url: '/v1/chat/completions',
    headers,
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    sink,
    onFinished: (listener) => {
      finished = listener;
    },
  };
  return { call, answer, json: () => JSON.parse(answer.body) as Record<string, unknown> };
}

async function newTurnService(replies: Reply[], options: { keys?: string } = {}) {
  await live.call(MemoryPattern.Store, { pool: 'team', actor: 'user', content: 'uses fish shell', category: 'preference' });
  const memory = observed(live);
  const { logger, lines } = recordingLogger();
  const gate = new MemoryGate(new GatewayTier1Cache(memory, { ttlMs: 60_000 }), logger, {
    retryAfterMs: 60_000,
    probeEveryMs: 60_000,
    cacheTrusted: () => true,
    ping: () => Promise.resolve(),
  });
  const upstream = new ScriptedUpstream(replies);
  const metrics = new RecordingMetrics();
  const jobs: ExtractExchangeData[] = [];
  const extraction: ExtractionPort = { enqueue: (job) => jobs.push(job) };
  const service = new TurnService(
    new AccessService(ApiKeys.parse(options.keys)),
    new MemoryInjection(gate, MEMORY_TOOLS),
    new MemoryToolExecutor(memory),
    extraction,
    metrics,
    logger,
    { memoryToolMaxIterations: 3 },
  );
  const chat: Surface<ChatRequest> = { route: 'chat.completions', adapter: new OpenAiChatAdapter(), upstream };
  const messages: Surface<AnthropicRequest> = { route: 'messages', adapter: new AnthropicMessagesAdapter(), upstream };
  return { service, chat, messages, memory, upstream, metrics, jobs, lines };
}

const completion = (message: Record<string, unknown>, finish = 'stop') => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
});
const ask = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-x', messages: [{ role: 'user', content: text }], ...extra });

describe('TurnService', () => {
  it("gives the model the pool's Tier 1 and the memory tools after the client's own, and hands its suggestions to extraction", async () => {
    const { service, chat, upstream, metrics, jobs } = await newTurnService([
      { json: completion({ content: 'Hi.<MEMORY_SUGGEST>likes brevity</MEMORY_SUGGEST>' }) },
    ]);
    const { call, answer, json } = clientCall(
      ask('hi', {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
        tools: [{ type: 'function', function: { name: 'mine' } }],
      }),
    );
    await service.handle(chat, call, 'team');

    const sent = upstream.sentJson(0);
    const tier1 = await tier1Of('team');
    expect(tier1).toContain('uses fish shell');
    expect(sent.messages[0]).toEqual({ role: 'system', content: `Be brief.\n\n${tier1}` });
    expect(sent.tools?.map((tool) => tool.function.name)).toEqual(['mine', ...MEMORY_TOOLS.map((tool) => tool.name)]);
    expect(answer.status).toBe(200);
    expect(json()).toMatchObject({ choices: [{ message: { content: 'Hi.' } }] });
    expect(jobs).toEqual([expect.objectContaining({ pool: 'team', suggestions: ['likes brevity'], requestId: 'req-1' })]);
    expect(metrics.tier1Chars).toBe(tier1.length);
    expect(metrics.requests).toEqual([['chat.completions', 200]]);
  });

  it("runs the model's memory calls in the gateway and answers with the final text only", async () => {
    const { service, chat, upstream, memory, metrics } = await newTurnService([
      {
        json: completion(
          { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'memory_search', arguments: '{"query":"shell"}' } }] },
          'tool_calls',
        ),
      },
      { json: completion({ content: 'You use fish.' }) },
    ]);
    const { call, json } = clientCall(ask('which shell do I use?'));
    await service.handle(chat, call, 'team');

    expect(memory.calls.filter((made) => made.pattern === MemoryPattern.Search)).toEqual([
      { pattern: MemoryPattern.Search, request: expect.objectContaining({ pool: 'team', query: 'shell' }) },
    ]);
    expect(upstream.sentJson(1).messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('uses fish shell') });
    const message = (json() as { choices: { message: Record<string, unknown> }[] }).choices[0]?.message;
    expect(message).toEqual({ role: 'assistant', content: 'You use fish.' });
    expect(metrics.memoryRounds).toBe(1);
  });

  it('fails open: with memory down the request goes upstream byte for byte as the client sent it', async () => {
    const { service, chat, upstream, metrics } = await newTurnService([{ json: completion({ content: 'Hi.' }) }]);
    await under.service.close();
    const raw = '{"model":"gpt-x",  "messages":[{"role":"user","content":"hi"}]}';
    const { call, answer } = clientCall(raw);
    await service.handle(chat, call, undefined);

    expect(upstream.sent).toEqual([{ path: '/chat/completions', body: raw }]);
    expect(answer.status).toBe(200);
    expect(metrics.errors).toEqual(['memory_unavailable']);
  });

  it('leaves memory out when the client says x-engram-memory: off, without asking memory', async () => {
    const { service, chat, upstream, memory } = await newTurnService([{ json: completion({ content: 'Hi.' }) }]);
    const { call, answer } = clientCall(ask('hi'), { 'x-engram-memory': 'off' });
    await service.handle(chat, call, undefined);

    expect(upstream.sent[0]?.body).toBe(JSON.stringify(ask('hi')));
    expect(memory.calls).toEqual([]);
    expect(answer.status).toBe(200);
  });

  it("refuses a missing key with a 401 and a body it cannot use with a 400, in the surface's own error shape", async () => {
    const keyed = await newTurnService([], { keys: 'secret=team' });
    const anonymous = clientCall(ask('hi'));
    await keyed.service.handle(keyed.messages, anonymous.call, undefined);
    expect(anonymous.answer.status).toBe(401);
    expect(anonymous.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.stringContaining('API key') } });

    const elsewhere = clientCall(ask('hi'), { authorization: 'Bearer secret' });
    await keyed.service.handle(keyed.chat, elsewhere.call, 'other');
    expect(elsewhere.answer.status).toBe(403);
    expect(elsewhere.json()).toMatchObject({ error: { type: 'permission_error', code: 'pool_forbidden' } });

    const broken = clientCall('{"model":', { authorization: 'Bearer secret' });
    await keyed.service.handle(keyed.chat, broken.call, undefined);
    expect(broken.answer.status).toBe(400);
    expect(broken.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_json' } });

    expect(keyed.upstream.sent).toEqual([]);
    expect(keyed.metrics.errors).toEqual(['auth', 'auth', 'bad_request']);
  });

  it("relays the upstream's own refusal as it is, and answers an unreachable upstream with a 502", async () => {
    const refusal = { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } };
    const { service, chat } = await newTurnService([{ status: 429, json: refusal }]);
    const limited = clientCall(ask('hi'));
    await service.handle(chat, limited.call, undefined);
    expect(limited.answer.status).toBe(429);
    expect(limited.json()).toEqual(refusal);

    const unreachable = clientCall(ask('hi'));
    await service.handle(chat, unreachable.call, undefined);
    expect(unreachable.answer.status).toBe(502);
    expect(unreachable.json()).toMatchObject({ error: { type: 'upstream_error', code: 'upstream_unavailable' } });
  });

  it("answers a bug of Engram's own with a 500 that is not dressed up as the upstream's, and logs it", async () => {
    const { service, messages, metrics, lines } = await newTurnService([{ fails: new TypeError('cannot read properties of undefined') }]);
    const { call, answer, json } = clientCall({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    await service.handle(messages, call, undefined);

    expect(answer.status).toBe(500);
    expect(json()).toEqual({ type: 'error', error: { type: 'api_error', message: 'internal error' } });
    expect(metrics.errors).toEqual(['internal']);
    expect(lines.filter((line) => line.msg === 'request failed inside Engram')).toHaveLength(1);
  });
});
