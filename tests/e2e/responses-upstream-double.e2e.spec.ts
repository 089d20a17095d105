import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { responsesCall, responsesOutput, ScriptedResponsesUpstream } from '../support/scripted-responses-upstream.js';

// The scripted upstream is the only fake in the suite, so it is checked against the official SDK first.
describe('scripted Responses upstream, driven by the openai SDK', () => {
  let upstream: ScriptedResponsesUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await ScriptedResponsesUpstream.start({ apiKey: 'sk-test' });
    client = new OpenAI({ baseURL: upstream.url, apiKey: 'sk-test', maxRetries: 0 });
  });
  afterAll(() => upstream.close());

  it('streams text and a function call with monotonic sequence numbers', async () => {
    upstream.reply(responsesOutput('Checking.', responsesCall('get_weather', { city: 'Zürich' })));
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'weather?' });
    const sequence: number[] = [];
    const types: string[] = [];
    for await (const event of stream) {
      sequence.push(event.sequence_number);
      types.push(event.type);
    }
    const response = await stream.finalResponse();

    expect(sequence).toEqual(sequence.map((_, index) => index));
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.function_call_arguments.done');
    expect(types.at(-1)).toBe('response.completed');
    expect(response.output[0]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'Checking.' }] });
    expect(response.output[1]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Zürich"}' });
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('keeps previous_response_id conversations, and insists every function call is answered', async () => {
    upstream.reply(responsesOutput(responsesCall('get_weather', { city: 'Bern' }, 'call_1')), responsesOutput('Sunny.'));
    const first = await client.responses.create({ model: 'gpt-4.1', input: 'weather in Bern?' });
    expect(first.output[0]).toMatchObject({ type: 'function_call', call_id: 'call_1' });

    const unanswered = await client.responses
      .create({ model: 'gpt-4.1', previous_response_id: first.id, input: 'and?' })
      .catch((caught: unknown) => caught);
    expect(unanswered).toBeInstanceOf(OpenAI.BadRequestError);

    const second = await client.responses.create({
      model: 'gpt-4.1',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
    });
    expect(second.output_text).toBe('Sunny.');
    expect(upstream.conversations.at(-1)?.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output']);

    const unknown = await client.responses
      .create({ model: 'gpt-4.1', previous_response_id: 'resp_missing', input: 'hi' })
      .catch((caught: unknown) => caught);
    expect(unknown).toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });

  it('answers HTTP errors in the OpenAI shape and fails streams with response.failed', async () => {
    upstream.reply({ kind: 'error', status: 429, errorType: 'rate_limit_error', message: 'slow down', code: 'rate_limit_exceeded' });
    await expect(client.responses.create({ model: 'gpt-4.1', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.RateLimitError);

    upstream.reply({ kind: 'stream-error', output: ['partial'], code: 'server_error', message: 'boom' });
    const events: string[] = [];
    for await (const event of await client.responses.create({ model: 'gpt-4.1', input: 'hi', stream: true })) {
      events.push(event.type);
      if (event.type === 'response.failed') expect(event.response.error).toMatchObject({ code: 'server_error', message: 'boom' });
    }
    expect(events.at(-1)).toBe('response.failed');
  });
});
