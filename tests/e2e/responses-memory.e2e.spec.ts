import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { codexProvider, DOC_ORIGIN } from '../support/client-config-doc.js';
import type { RecordedRequest } from '../support/scripted-http.js';
import { responsesCall, responsesOutput, type ResponsesItemJson, type ResponsesReply } from '../support/scripted-responses-upstream.js';
import { expectExtraction, startSurfacesStack, type SurfacesStack } from '../support/surfaces-stack.js';

const MEMORY_TOOLS = ['store_memory', 'memory_search', 'memory_list', 'memory_update', 'memory_delete', 'memory_refresh'];
const MODEL = 'gpt-5-codex';

const textOf = (item: ResponsesItemJson | undefined): string => {
  const content = item?.['content'];
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as { text?: string }[]).map((part) => part.text ?? '').join('') : '';
};

/** A scripted model that acts on a command in the person's last message and uses tool outputs once it has them. */
function model(_request: RecordedRequest, conversation: readonly ResponsesItemJson[]): ResponsesReply {
  const said = textOf([...conversation].reverse().find((item) => item['role'] === 'user'));
  const last = conversation.at(-1);
  const output = last?.type === 'function_call_output' ? String(last['output']) : undefined;
  if (said.startsWith('STORE ')) {
    return output !== undefined
      ? responsesOutput('Noted.')
      : responsesOutput(responsesCall('store_memory', { content: said.slice(6), type: 'USER', category: 'preference' }));
  }
  // NOTE stores a decision, which never reaches Tier 1, so that a later search lists it (Tier 1 entries are left out).
  if (said.startsWith('NOTE ')) {
    return output !== undefined
      ? responsesOutput('Noted.')
      : responsesOutput(responsesCall('store_memory', { content: said.slice(5), type: 'MEMORY', category: 'decision' }));
  }
  if (said.startsWith('RECALL ')) {
    return output !== undefined
      ? responsesOutput(`Memory says: ${output}`)
      : responsesOutput('Let me check.', responsesCall('memory_search', { query: said.slice(7) }));
  }
  if (said.startsWith('MIXED')) {
    if (output !== undefined) return responsesOutput(`Weather tool said: ${output}`);
    return responsesOutput(responsesCall('memory_search', { query: 'weather' }), responsesCall('get_weather', { city: 'Oslo' }));
  }
  if (said.startsWith('SUGGEST')) return responsesOutput('Sure. <MEMORY_SUGGEST>User likes green tea</MEMORY_SUGGEST> Anything else?');
  if (said.startsWith('ECHO'))
    return responsesOutput(
      `Earlier you said: ${conversation
        .filter((item) => item['role'] === 'user')
        .map(textOf)
        .join(' / ')}`,
    );
  return responsesOutput('Plain answer.');
}

const visibleText = (output: readonly OpenAI.Responses.ResponseOutputItem[]): string =>
  output.flatMap((item) => (item.type === 'message' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')) : [])).join('|');

describe('Codex CLI through Engram: OpenAI Responses with memory', () => {
  let stack: SurfacesStack;
  /** The SDK configured like Codex's [model_providers.engram]: base_url = "<gateway>/v1" (or a pool's), key from env_key. */
  const codex = (pool?: string, headers: Record<string, string> = {}) =>
    new OpenAI({
      baseURL: pool ? `${stack.gateway.url}/pools/${pool}/v1` : `${stack.gateway.url}/v1`,
      apiKey: 'sk-codex-key',
      maxRetries: 0,
      timeout: 20_000,
      defaultHeaders: headers,
    });

  beforeAll(async () => {
    stack = await startSurfacesStack();
    stack.responses.respondWith(model);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('takes Codex’s documented configuration: base_url …/v1 at the root or a pool, wire_api responses, the env_key as bearer', async () => {
    const { model: configured, provider, poolBaseUrl } = codexProvider();
    expect(provider['wire_api']).toBe('responses');
    const environment: Record<string, string> = { [provider['env_key'] ?? '']: 'sk-codex-key' };
    const documented = (baseUrl: string) =>
      new OpenAI({ baseURL: baseUrl.replace(DOC_ORIGIN, stack.gateway.url), apiKey: environment[provider['env_key'] ?? ''], maxRetries: 0 });
    const answer = await documented(provider['base_url'] ?? '').responses.create({ model: configured, input: 'hello' });
    expect(answer.output_text).toBe('Plain answer.');
    const sent = stack.responses.requests.at(-1);
    expect(sent?.path).toBe('/v1/responses');
    expect(sent?.headers['authorization']).toBe('Bearer sk-codex-key');
    const tools = sent?.body['tools'] as { name: string; type: string }[];
    expect(tools.map((tool) => tool.name)).toEqual(MEMORY_TOOLS);
    expect(answer.tools).toEqual([]);

    await documented(poolBaseUrl).responses.create({ model: configured, input: 'hello' });
    expect(stack.responses.requests.at(-1)?.path).toBe('/v1/responses');
  });

  it('stores a memory out of sight while streaming like Codex (store: false), then recalls it in a new conversation', async () => {
    const client = codex('codex-recall');
    const stream = client.responses.stream({ model: MODEL, input: [{ role: 'user', content: 'STORE Prefers tabs over spaces' }], store: false });
    const stored = await stream.finalResponse();
    expect(visibleText(stored.output)).toBe('Noted.');
    expect(stored.output.map((item) => item.type)).toEqual(['message']);

    const before = stack.responses.responseRequests.length;
    const recalled = await client.responses.create({ model: MODEL, input: 'RECALL tabs', instructions: 'You are Codex.' });
    // Already in the Tier 1 block the model was given: the search names it by id, to be cited, without repeating its facts.
    expect(recalled.output_text).toMatch(
      /^Let me check\.Memory says: Only memories already in your memory block match "tabs":\n\[id:[\w-]+\] Prefers tabs over spaces$/,
    );
    expect(recalled.output.map((item) => item.type)).toEqual(['message', 'message']);
    const first = stack.responses.responseRequests[before];
    expect(first?.body['instructions']).toMatch(/^You are Codex\.\n\n.*Prefers tabs over spaces/s);
  });

  it('streams with a monotonic sequence_number and consistent output_index across the hidden loop', async () => {
    const client = codex('codex-stream');
    await client.responses.create({ model: MODEL, input: 'NOTE Uses fish shell' });
    const events: ResponseStreamEvent[] = [];
    const stream = client.responses.stream({ model: MODEL, input: 'RECALL shell' });
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();

    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events[0]?.type).toBe('response.created');
    expect(events.filter((event) => event.type === 'response.created')).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('response.completed');
    const added = events.flatMap((event) => (event.type === 'response.output_item.added' ? [event.output_index] : []));
    expect(added).toEqual([0, 1]);
    expect(events.some((event) => event.type.startsWith('response.function_call_arguments'))).toBe(false);
    expect(events.some((event) => 'item' in event && event.item.type === 'function_call')).toBe(false);
    expect(final.output.map((item) => item.type)).toEqual(['message', 'message']);
    expect(visibleText(final.output)).toMatch(/Uses fish shell/);
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('keeps previous_response_id conversations working across a hidden loop', async () => {
    const client = codex('codex-chain');
    const first = await client.responses.create({ model: MODEL, input: 'RECALL anything' });
    const second = await client.responses.create({ model: MODEL, input: 'ECHO', previous_response_id: first.id });
    expect(second.output_text).toBe('Earlier you said: RECALL anything / ECHO');
    expect(stack.responses.responseRequests.at(-1)?.body['previous_response_id']).toBe(first.id);
  });

  it('in a turn mixing memory and client calls gives Codex its own call only, and a previous_response_id continuation works', async () => {
    const client = codex('codex-mixed');
    const tools = [
      { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
    ];
    const first = await client.responses.stream({ model: MODEL, input: 'MIXED weather?', tools }).finalResponse();
    expect(first.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Oslo"}' })]);
    const call = first.output[0] as { call_id: string };

    const chained = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    expect(chained.output_text).toBe('Weather tool said: sunny');

    // Codex's own way: no previous_response_id, the whole history sent back.
    const resent = await client.responses.create({
      model: MODEL,
      tools,
      store: false,
      input: [
        { role: 'user', content: 'MIXED weather?' },
        ...first.output,
        { type: 'function_call_output', call_id: call.call_id, output: 'rainy' },
      ] as OpenAI.Responses.ResponseInput,
    });
    expect(resent.output_text).toBe('Weather tool said: rainy');
  });

  it('strips memory markers from streamed text and from the done events, and queues them for extraction', async () => {
    const deltas: string[] = [];
    const stream = codex('codex-markers').responses.stream({ model: MODEL, input: 'SUGGEST' });
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('Sure.  Anything else?');
    expect(visibleText(final.output)).toBe('Sure.  Anything else?');
    await expectExtraction(stack, 'codex-markers', 'SUGGEST');
  });

  describe('upstream failures reach the client in OpenAI’s error shape', () => {
    it('relays the upstream’s own error', async () => {
      stack.responses.reply({
        kind: 'error',
        status: 429,
        errorType: 'rate_limit_error',
        message: 'Rate limit reached',
        code: 'rate_limit_exceeded',
      });
      const error = await codex()
        .responses.create({ model: MODEL, input: 'hello' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(error).toMatchObject({ code: 'rate_limit_exceeded', message: expect.stringContaining('Rate limit reached') });
    });

    it('answers 502 when the upstream drops the connection and 504 when it is silent', async () => {
      stack.responses.reply({ kind: 'drop' });
      const dropped = await codex()
        .responses.create({ model: MODEL, input: 'hello' })
        .catch((caught: unknown) => caught);
      expect(dropped).toMatchObject({ status: 502, type: 'upstream_error', code: 'upstream_unavailable' });

      stack.responses.reply({ kind: 'hang' });
      const silent = await codex()
        .responses.create({ model: MODEL, input: 'hello' })
        .catch((caught: unknown) => caught);
      expect(silent).toMatchObject({ status: 504, type: 'upstream_error', code: 'upstream_timeout' });
    });

    it('ends a stream that fails after the memory round with response.failed', async () => {
      stack.responses.reply(responsesOutput(responsesCall('memory_list', {})), {
        kind: 'error',
        status: 500,
        errorType: 'server_error',
        message: 'The server had an error',
      });
      const events: ResponseStreamEvent[] = [];
      for await (const event of await codex('codex-errors').responses.create({ model: MODEL, input: 'hello', stream: true })) events.push(event);
      const last = events.at(-1);
      expect(last?.type).toBe('response.failed');
      expect(last).toMatchObject({ response: { status: 'failed', error: { message: 'The server had an error' } } });
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    });
  });
});
