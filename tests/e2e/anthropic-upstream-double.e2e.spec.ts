import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { anthropicMessage, anthropicToolUse, ScriptedAnthropicUpstream } from '../support/scripted-anthropic-upstream.js';

// The scripted upstream is the only fake in the suite, so it is checked against the official SDK first:
// if the SDK accepts its streams and errors, it accepts what the gateway passes on from them.
describe('scripted Anthropic upstream, driven by @anthropic-ai/sdk', () => {
  let upstream: ScriptedAnthropicUpstream;
  let client: Anthropic;

  beforeAll(async () => {
    upstream = await ScriptedAnthropicUpstream.start({ apiKey: 'sk-ant-test' });
    client = new Anthropic({ baseURL: upstream.url, apiKey: 'sk-ant-test', authToken: null, maxRetries: 0 });
  });
  afterAll(() => upstream.close());

  const ask = { model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user' as const, content: 'hi' }] };

  it('streams text and a tool_use whose partial JSON the SDK assembles', async () => {
    upstream.reply(anthropicMessage('Let me look that up.', anthropicToolUse('get_weather', { city: 'Zürich', days: 3 })));
    const stream = client.messages.stream(ask);
    const texts: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    const message = await stream.finalMessage();

    expect(texts.length).toBeGreaterThan(1);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Let me look that up.' });
    expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Zürich', days: 3 } });
    expect(message.usage.output_tokens).toBeGreaterThan(1);
    expect(upstream.messageRequests.at(-1)?.headers['anthropic-version']).toBeTruthy();
  });

  it('answers without streaming, and counts tokens', async () => {
    upstream.reply(anthropicMessage('Hello there.'));
    const message = await client.messages.create(ask);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello there.' }]);
    expect(message.stop_reason).toBe('end_turn');

    const count = await client.messages.countTokens(ask);
    expect(count.input_tokens).toBeGreaterThan(0);
  });

  it('answers errors in the shape the SDK maps to its error classes', async () => {
    upstream.reply({ kind: 'error', status: 429, errorType: 'rate_limit_error', message: 'slow down' });
    const error = await client.messages.create(ask).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'slow down' },
    });

    const wrongKey = new Anthropic({ baseURL: upstream.url, apiKey: 'nope', authToken: null, maxRetries: 0 });
    await expect(wrongKey.messages.create(ask)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('rejects conversations the real API rejects: a tool_use without its tool_result, an empty text block', async () => {
    const dangling = await client.messages
      .create({
        ...ask,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'x', input: {} }] },
          { role: 'user', content: 'go on' },
        ],
      })
      .catch((caught: unknown) => caught);
    expect(dangling).toBeInstanceOf(Anthropic.BadRequestError);
    const empty = await client.messages
      .create({ ...ask, messages: [{ role: 'user', content: [{ type: 'text', text: ' ' }] }] })
      .catch((caught: unknown) => caught);
    expect(empty).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('fails a stream with an error event the SDK raises', async () => {
    upstream.reply({ kind: 'stream-error', content: [{ type: 'text', text: 'partial' }], errorType: 'overloaded_error', message: 'Overloaded' });
    const error = await client.messages
      .stream(ask)
      .finalMessage()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).toContain('Overloaded');
  });
});
