import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { anthropicMessage, anthropicText, anthropicToolUse, type AnthropicReply } from '../support/scripted-anthropic-upstream.js';
import { claudeCodeSettings, DOC_ORIGIN } from '../support/client-config-doc.js';
import type { RecordedRequest } from '../support/scripted-http.js';
import { expectExtraction, startSurfacesStack, type SurfacesStack } from '../support/surfaces-stack.js';

const MEMORY_TOOLS = ['store_memory', 'memory_search', 'memory_list', 'memory_update', 'memory_delete', 'memory_refresh'];
const MODEL = 'claude-sonnet-4-5';

type Block = { type: string; text?: string; content?: unknown; name?: string; id?: string; tool_use_id?: string };
type Message = { role: string; content: string | Block[] };

const blocksOf = (message: Message | undefined): Block[] => (Array.isArray(message?.content) ? message.content : []);
const textOf = (message: Message | undefined): string =>
  typeof message?.content === 'string'
    ? message.content
    : blocksOf(message)
        .map((block) => (block.type === 'text' ? block.text : ''))
        .join('');

/** A scripted Claude that acts on a command in the person's last message, and uses tool results once it has them. */
function claude(request: RecordedRequest): AnthropicReply {
  const messages = request.body['messages'] as Message[];
  const said = textOf([...messages].reverse().find((message) => message.role === 'user' && textOf(message) !== ''));
  const result = blocksOf(messages.at(-1)).find((block) => block.type === 'tool_result');
  const resultText = typeof result?.content === 'string' ? result.content : JSON.stringify(result?.content ?? '');
  if (said.startsWith('STORE ')) {
    return result
      ? anthropicMessage('Noted.')
      : anthropicMessage(anthropicToolUse('store_memory', { content: said.slice(6), type: 'USER', category: 'preference' }));
  }
  // NOTE stores a decision, which never reaches Tier 1, so that a later search lists it (Tier 1 entries are left out).
  if (said.startsWith('NOTE ')) {
    return result
      ? anthropicMessage('Noted.')
      : anthropicMessage(anthropicToolUse('store_memory', { content: said.slice(5), type: 'MEMORY', category: 'decision' }));
  }
  if (said.startsWith('RECALL ')) {
    return result
      ? anthropicMessage(`Memory says: ${resultText}`)
      : anthropicMessage('Let me check.', anthropicToolUse('memory_search', { query: said.slice(7) }));
  }
  if (said.startsWith('MIXED')) {
    if (result) return anthropicMessage(`Weather tool said: ${resultText}`);
    return anthropicMessage(anthropicToolUse('memory_search', { query: 'weather' }), anthropicToolUse('get_weather', { city: 'Oslo' }));
  }
  if (said.startsWith('SUGGEST')) return anthropicMessage('Sure. <MEMORY_SUGGEST>User likes green tea</MEMORY_SUGGEST> Anything else?');
  return anthropicMessage(anthropicText('Plain answer.'));
}

describe('Claude Code through Engram: Anthropic Messages with memory', () => {
  let stack: SurfacesStack;
  /** The SDK configured like Claude Code with ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN. */
  const claudeCode = (pool?: string, headers: Record<string, string> = {}) =>
    new Anthropic({
      baseURL: pool ? `${stack.gateway.url}/pools/${pool}` : stack.gateway.url,
      apiKey: null,
      authToken: 'sk-ant-oat01-claude-code',
      maxRetries: 0,
      timeout: 20_000,
      defaultHeaders: headers,
    });
  const ask = (content: string | MessageParam['content'], extra: object = {}) => ({
    model: MODEL,
    max_tokens: 512,
    messages: [{ role: 'user' as const, content }],
    ...extra,
  });
  const requestsSince = (count: number) => stack.anthropic.messageRequests.slice(count);

  beforeAll(async () => {
    stack = await startSurfacesStack();
    stack.anthropic.respondWith(claude);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('takes Claude Code’s documented configuration: ANTHROPIC_BASE_URL at the root or a pool, its token and headers forwarded', async () => {
    const { env, poolBaseUrl } = claudeCodeSettings();
    const documented = (baseUrl: string) =>
      new Anthropic({
        baseURL: baseUrl.replace(DOC_ORIGIN, stack.gateway.url),
        apiKey: null,
        authToken: env['ANTHROPIC_AUTH_TOKEN'] ?? null,
        defaultHeaders: { 'anthropic-beta': 'claude-code-20250219' },
        maxRetries: 0,
      });
    const before = stack.anthropic.requests.length;
    // Claude Code calls the beta endpoints, `?beta=true`.
    const message = await documented(env['ANTHROPIC_BASE_URL'] ?? '').messages.create(ask('hello'), { query: { beta: 'true' } });
    expect(message.content).toEqual([{ type: 'text', text: 'Plain answer.' }]);
    const inPool = await documented(poolBaseUrl).messages.countTokens(
      { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
      { query: { beta: 'true' } },
    );
    expect(inPool.input_tokens).toBeGreaterThan(0);

    const [sent, counted] = stack.anthropic.requests.slice(before);
    expect(sent?.path).toBe('/v1/messages');
    expect(counted?.path).toBe('/v1/messages/count_tokens');
    expect(sent?.headers['authorization']).toBe(`Bearer ${env['ANTHROPIC_AUTH_TOKEN']}`);
    expect(sent?.headers['x-api-key']).toBeUndefined();
    // The SDK's own version header, forwarded as it came.
    expect(sent?.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent?.headers['anthropic-beta']).toBe('claude-code-20250219');
    expect((sent?.body['tools'] as { name: string }[]).map((tool) => tool.name)).toEqual(MEMORY_TOOLS);

    // With ANTHROPIC_API_KEY Claude Code sends x-api-key (this SDK version would send a bearer, hence the header).
    const keyed = new Anthropic({
      baseURL: `${stack.gateway.url}/pools/team-a`,
      apiKey: null,
      authToken: null,
      defaultHeaders: { 'x-api-key': 'sk-ant-api03-key' },
      maxRetries: 0,
    });
    await keyed.messages.create(ask('hello'));
    expect(stack.anthropic.requests.at(-1)?.headers['x-api-key']).toBe('sk-ant-api03-key');
  });

  it('stores a memory out of sight, then recalls it: in Tier 1 of the next conversation and through memory_search', async () => {
    const pool = 'claude-recall';
    const client = claudeCode(pool);
    const stream = client.messages.stream(ask('STORE Prefers tabs over spaces'));
    const stored = await stream.finalMessage();
    expect(stored.content).toEqual([{ type: 'text', text: 'Noted.' }]);
    expect(stored.stop_reason).toBe('end_turn');

    const before = stack.anthropic.messageRequests.length;
    const recalled = await client.messages.create(ask('RECALL tabs'));
    const text = recalled.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('|');
    // Already in the Tier 1 block the model was given: the search names it by id, to be cited, without repeating its facts.
    expect(text).toMatch(
      /^Let me check\.\|Memory says: Only memories already in your memory block match "tabs":\n\[id:[\w-]+\] Prefers tabs over spaces$/,
    );
    expect(recalled.content.every((block) => block.type === 'text')).toBe(true);

    const [first] = requestsSince(before);
    expect(JSON.stringify(first?.body['system'])).toContain('Prefers tabs over spaces');
    const memories = (await (await fetch(`${stack.gateway.url}/engram/pools/${pool}/memories`)).json()) as unknown;
    expect(JSON.stringify(memories)).toContain('Prefers tabs over spaces');
  });

  it('streams one well-formed message across a hidden tool loop', async () => {
    const client = claudeCode('claude-stream');
    await client.messages.create(ask('NOTE Uses fish shell'));
    const events: RawMessageStreamEvent[] = [];
    const stream = client.messages.stream(ask('RECALL shell'));
    stream.on('streamEvent', (event) => events.push(event));
    const message = await stream.finalMessage();

    expect(JSON.stringify(events)).not.toMatch(new RegExp(MEMORY_TOOLS.join('|')));
    expect(events[0]?.type).toBe('message_start');
    expect(events.at(-1)?.type).toBe('message_stop');
    expect(events.filter((event) => event.type === 'message_start')).toHaveLength(1);
    const starts = events.flatMap((event) => (event.type === 'content_block_start' ? [event.index] : []));
    expect(starts).toEqual([0, 1]);
    expect(message.content.map((block) => block.type)).toEqual(['text', 'text']);
    expect(message.content[1]).toMatchObject({ text: expect.stringContaining('Uses fish shell') });
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('in a turn mixing memory and client tools gives Claude Code its own tool_use only, and the conversation goes on', async () => {
    const client = claudeCode('claude-mixed');
    const tools = [
      { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } },
    ];
    const first = await client.messages.stream(ask('MIXED weather?', { tools })).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { city: 'Oslo' } })]);
    const call = first.content[0] as { id: string };

    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 512,
      tools,
      messages: [
        { role: 'user', content: 'MIXED weather?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Weather tool said: sunny' }]);
  });

  it('strips memory markers from the stream, split across deltas as they are, and queues them for extraction', async () => {
    const raw: string[] = [];
    const stream = claudeCode('claude-markers').messages.stream(ask('SUGGEST'));
    stream.on('text', (delta) => raw.push(delta));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Sure.  Anything else?' }]);
    expect(raw.join('')).toBe('Sure.  Anything else?');
    await expectExtraction(stack, 'claude-markers', 'SUGGEST');
  });

  it('counts tokens of what is really sent: the memory tools and Tier 1 included', async () => {
    const client = claudeCode('claude-recall');
    const count = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(count.input_tokens).toBeGreaterThan(0);
    const sent = stack.anthropic.requests.at(-1);
    expect(sent?.path).toBe('/v1/messages/count_tokens');
    expect((sent?.body['tools'] as { name: string }[]).map((tool) => tool.name)).toEqual(MEMORY_TOOLS);
    expect(JSON.stringify(sent?.body['system'])).toContain('Prefers tabs over spaces');
  });

  it('lists the Anthropic upstream’s models to an Anthropic client', async () => {
    const models = await claudeCode('team-a').models.list();
    expect(models.data.map((model) => model.id)).toEqual([MODEL]);
    expect(stack.anthropic.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/models' });
  });

  it('passes a request through untouched with x-engram-memory: off', async () => {
    await claudeCode(undefined, { 'x-engram-memory': 'off' }).messages.create(ask('hello'));
    const sent = stack.anthropic.messageRequests.at(-1);
    expect(sent?.body['tools']).toBeUndefined();
    expect(sent?.body['system']).toBeUndefined();
  });

  it('refuses a malformed pool name with a 400 in Anthropic’s error shape', async () => {
    const error = (await claudeCode('Not_A_Pool')
      .messages.create(ask('hello'))
      .catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.APIError>;
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('pool') } });
  });

  describe('upstream failures reach the client in Anthropic’s error shape', () => {
    it('relays the upstream’s own error', async () => {
      stack.anthropic.reply({
        kind: 'error',
        status: 429,
        errorType: 'rate_limit_error',
        message: 'Number of requests has exceeded your rate limit',
      });
      const error = await claudeCode()
        .messages.create(ask('hello'))
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    });

    it('answers 502 api_error when the upstream drops the connection, 504 timeout_error when it is silent', async () => {
      stack.anthropic.reply({ kind: 'drop' });
      const dropped = (await claudeCode()
        .messages.create(ask('hello'))
        .catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.APIError>;
      expect(dropped.status).toBe(502);
      expect(dropped.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });

      stack.anthropic.reply({ kind: 'hang' });
      const silent = (await claudeCode()
        .messages.create(ask('hello'))
        .catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.APIError>;
      expect(silent.status).toBe(504);
      expect(silent.error).toMatchObject({ type: 'error', error: { type: 'timeout_error' } });
    });

    it('ends a stream that fails after the memory round with an error event the SDK raises', async () => {
      stack.anthropic.reply(anthropicMessage('Looking.', anthropicToolUse('memory_list', {})), {
        kind: 'error',
        status: 529,
        errorType: 'overloaded_error',
        message: 'Overloaded',
      });
      const stream = claudeCode('claude-errors').messages.stream(ask('hello'));
      const error = await stream.finalMessage().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect(String((error as Error).message)).toContain('Overloaded');
    });
  });
});
