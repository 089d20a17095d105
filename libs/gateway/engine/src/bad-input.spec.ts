import { describe, expect, it } from '@jest/globals';
import { AnthropicMessagesAdapter } from './anthropic-messages/anthropic-adapter.js';
import { upstreamError } from './errors.js';
import { OpenAiChatAdapter } from './openai-chat/chat-adapter.js';
import { OpenAiResponsesAdapter } from './openai-responses/responses-adapter.js';
import { relay } from './relay.js';
import { RecordingSink, runScriptedTurn } from './testing/scripted-turn.js';
import { refusalOf } from './testing/refusal.js';

const user = [{ role: 'user', content: 'hi' }];

describe('a tool that is not an object', () => {
  it.each([
    ['null', null, 'null'],
    ['a string', 'get_weather', 'a string'],
    ['an array', [], 'an array'],
  ])('is a 400 naming the field on /v1/chat/completions and /v1/responses (%s)', (_label, tool, described) => {
    const chat = refusalOf(() =>
      new OpenAiChatAdapter().parseRequest({ model: 'm', messages: user, tools: [{ type: 'function', function: { name: 'f' } }, tool] }),
    );
    expect(chat.status).toBe(400);
    expect(chat.body().error).toEqual({
      message: `Invalid type for 'tools[1]': expected an object, but got ${described} instead.`,
      type: 'invalid_request_error',
      code: 'invalid_type',
    });
    const responses = refusalOf(() => new OpenAiResponsesAdapter().parseRequest({ model: 'm', input: 'hi', tools: [tool] }));
    expect(responses.status).toBe(400);
    expect(responses.message).toBe(`Invalid type for 'tools[0]': expected an object, but got ${described} instead.`);
  });

  it('is a 400 in Anthropic shape on /v1/messages', () => {
    const adapter = new AnthropicMessagesAdapter();
    const refusal = refusalOf(() => adapter.parseRequest({ model: 'm', max_tokens: 10, messages: user, tools: [null] }));
    expect(refusal.status).toBe(400);
    expect(adapter.errorBody(refusal)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'tools.0: Input should be a valid dictionary or object to extract fields from' },
    });
  });
});

describe('a failure that is Engram’s own', () => {
  it('is a 500 server_error, never reported as the upstream’s, in a memory turn', async () => {
    // Too deep for JSON.stringify: the gateway refuses such bodies first, but a bug must still not look like a 502.
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const { sink, sent } = await runScriptedTurn(new OpenAiChatAdapter(), { model: 'm', messages: user, metadata: deep }, [{ body: '{}' }]);
    expect(sent).toEqual([]);
    expect(sink.status).toBe(500);
    expect(JSON.parse(sink.body)).toEqual({ error: { message: 'internal error', type: 'server_error', code: 'internal_error' } });
  });

  it('is a 500 in a relay, while the upstream port’s own failures stay 502/504', async () => {
    const internal = new RecordingSink();
    const kinds: string[] = [];
    await relay(() => Promise.reject(new RangeError('Maximum call stack size exceeded')), internal, { onError: (kind) => kinds.push(kind) });
    expect(internal.status).toBe(500);
    expect(JSON.parse(internal.body)).toMatchObject({ error: { type: 'server_error' } });

    const upstream = new RecordingSink();
    await relay(() => Promise.reject(upstreamError(504, 'the upstream did not answer in time')), upstream, { onError: (kind) => kinds.push(kind) });
    expect(upstream.status).toBe(504);
    expect(JSON.parse(upstream.body)).toMatchObject({ error: { type: 'upstream_error', code: 'upstream_timeout' } });
    expect(kinds).toEqual(['internal', 'upstream']);
  });
});

describe('a content part that is not an object', () => {
  const MARKED = 'Sure. <MEMORY_SUGGEST>User likes green tea</MEMORY_SUGGEST>';
  const parts = (text: string, type: string) => [null, 7, 'loose', [], { type, text }];

  it.each([
    [
      'Chat Completions',
      new OpenAiChatAdapter(),
      { model: 'm', messages: [{ role: 'user', content: parts('I like green tea', 'text') }] },
      { choices: [{ index: 0, message: { role: 'assistant', content: MARKED }, finish_reason: 'stop' }] },
    ],
    [
      'Responses',
      new OpenAiResponsesAdapter(),
      { model: 'm', input: [{ type: 'message', role: 'user', content: parts('I like green tea', 'input_text') }] },
      { id: 'resp_1', object: 'response', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: MARKED }] }] },
    ],
    [
      'Messages',
      new AnthropicMessagesAdapter(),
      { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: parts('I like green tea', 'text') }] },
      { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: MARKED }], stop_reason: 'end_turn' },
    ],
  ] as const)(
    'is skipped on %s: the text beside it still reaches extraction, and the request goes upstream as sent',
    async (_surface, adapter, request, reply) => {
      const { sink, sent, jobs } = await runScriptedTurn(adapter as Parameters<typeof runScriptedTurn>[0], request, [
        { body: JSON.stringify(reply) },
      ]);
      expect(sink.status).toBe(200);
      expect(jobs).toEqual([
        expect.objectContaining({ suggestions: ['User likes green tea'], exchange: expect.objectContaining({ user: 'I like green tea' }) }),
      ]);
      expect(JSON.stringify(sent[0])).toContain('[null,7,"loose",[],');
    },
  );
});
