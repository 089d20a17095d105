import { describe, expect, it } from '@jest/globals';
import { AnthropicMessagesAdapter } from './anthropic-messages/anthropic-adapter.js';
import { upstreamError } from './errors.js';
import { OpenAiChatAdapter } from './openai-chat/chat-adapter.js';
import { OpenAiResponsesAdapter } from './openai-responses/responses-adapter.js';
import { relay } from './relay.js';
import { RecordingSink } from './testing/recording-sink.js';
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
