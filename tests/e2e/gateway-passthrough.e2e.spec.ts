import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, eventually } from '@engram/testing';
import { contentText, startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import { rawRequest } from '../support/raw-http.js';
import type { RecordedRequest } from '../support/scripted-http.js';
import { say, type ChatReply, type ChatRequestJson } from '../support/scripted-openai-upstream.js';
import { startGateway, type RunningGateway } from '../support/stack.js';

function upstreamModel(request: RecordedRequest): ChatReply {
  const messages = (request.body as ChatRequestJson).messages;
  const user = contentText(messages[messages.length - 1]?.content);
  if (user === 'FAIL') return { kind: 'error', status: 500, message: 'The server had an error while processing your request.' };
  if (user === 'RATE') return { kind: 'error', status: 429, message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' };
  if (user === 'HANG') return { kind: 'hang' };
  if (user === 'DROP') return { kind: 'drop' };
  if (user === 'STALL') return say('one two three four five six seven eight', { stallAfterChunks: 2 });
  if (user === 'TOOLS') {
    return {
      kind: 'answer',
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Oslo' } },
        { name: 'get_time', arguments: { zone: 'CET' } },
      ],
    };
  }
  return say('ok from upstream');
}

const clientTools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
];

describe('gateway pass-through and failures (openai SDK client)', () => {
  let stack: GatewayStack;
  let slowGateway: RunningGateway;

  beforeAll(async () => {
    stack = await startGatewayStack({ responder: upstreamModel });
    slowGateway = await startGateway({
      UPSTREAM_BASE_URL: stack.upstream.baseUrl,
      REDIS_URL: stack.redis.url,
      UPSTREAM_TIMEOUT_MS: '400',
      ...(stack.memory?.clientEnv ?? {}),
    });
  });
  afterAll(async () => {
    await slowGateway?.stop();
    await stack?.stop();
  });

  const ask = (content: string, headers?: Record<string, string>) =>
    stack.client(headers ? { headers } : {}).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content }] });

  it.each([
    ['with memory', {}],
    ['with memory off', { 'x-engram-memory': 'off' }],
  ])('passes the client tool calls, usage and a request id through %s', async (_label, headers) => {
    const response = await stack
      .client({ headers })
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'TOOLS' }], tools: clientTools, parallel_tool_calls: true })
      .withResponse();
    const message = response.data.choices[0]?.message;
    expect(message?.tool_calls?.map((call) => call.type === 'function' && [call.function.name, JSON.parse(call.function.arguments)])).toEqual([
      ['get_weather', { city: 'Oslo' }],
      ['get_time', { zone: 'CET' }],
    ]);
    expect(response.data.choices[0]?.finish_reason).toBe('tool_calls');
    expect(response.data.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.response.headers.get('x-request-id')).toBeTruthy();
    const forwarded = stack.upstream.chatRequests.at(-1)?.body;
    expect(forwarded?.tools?.slice(0, 2)).toEqual(clientTools);
    expect(forwarded?.['parallel_tool_calls']).toBe(true);
    // Without UPSTREAM_API_KEY the client's own bearer goes upstream.
    expect(stack.upstream.chatRequests.at(-1)?.headers.authorization).toBe('Bearer sk-client');
  });

  it('streams client tool-call deltas through with their indexes', async () => {
    const stream = await stack
      .client()
      .chat.completions.create({ model: 'gpt-test', stream: true, tools: clientTools, messages: [{ role: 'user', content: 'TOOLS' }] });
    const starts: [number, string][] = [];
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) if (call.function?.name) starts.push([call.index, call.function.name]);
    }
    expect(starts).toEqual([
      [0, 'get_weather'],
      [1, 'get_time'],
    ]);
  });

  it.each([
    ['with memory', {}],
    ['with memory off', { 'x-engram-memory': 'off' }],
  ])('returns upstream error statuses and bodies unchanged %s', async (_label, headers) => {
    for (const [content, status] of [
      ['FAIL', 500],
      ['RATE', 429],
    ] as const) {
      const response = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content }] }),
      });
      expect(response.status).toBe(status);
      const body = (await response.json()) as { error: { message: string; type: string; code: string | null } };
      expect(body.error.message).toBe(content === 'FAIL' ? 'The server had an error while processing your request.' : 'Rate limit reached');
      if (content === 'RATE') expect(body.error.code).toBe('rate_limit_exceeded');
    }
    await expect(ask('FAIL', headers)).rejects.toMatchObject({ status: 500 });
  });

  it('answers 502 when the upstream drops the connection and 504 when it does not answer in time', async () => {
    await expect(ask('DROP')).rejects.toMatchObject({ status: 502, error: { code: 'upstream_unavailable' } });
    const slow = new OpenAI({ baseURL: `${slowGateway.url}/v1`, apiKey: 'sk-client', maxRetries: 0 });
    for (const headers of [{}, { 'x-engram-memory': 'off' }] as Record<string, string>[]) {
      const failure = await slow.chat.completions
        .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'HANG' }] }, { headers })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(APIError);
      expect((failure as APIError).status).toBe(504);
      expect((failure as APIError).error).toMatchObject({ type: 'upstream_error', code: 'upstream_timeout' });
    }
    expect((await fetch(`${slowGateway.url}/healthz`)).status).toBe(200);
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    for (const headers of [{}, { 'x-engram-memory': 'off' }] as Record<string, string>[]) {
      const abortedBefore = stack.upstream.aborted.length;
      const controller = new AbortController();
      const stream = await stack
        .client({ headers })
        .chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'STALL' }] }, { signal: controller.signal });
      let received = '';
      try {
        for await (const chunk of stream) {
          received += chunk.choices[0]?.delta.content ?? '';
          if (received.length >= 4) controller.abort();
        }
      } catch {
        // the SDK reports the abort
      }
      expect(received.length).toBeGreaterThan(0);
      await eventually(async () => expect(stack.upstream.aborted.length).toBe(abortedBefore + 1), { timeout: 5_000 });
    }
  });

  it('answers malformed and oversized bodies with OpenAI-shaped 4xx errors', async () => {
    const post = (body: string | Uint8Array, contentType = 'application/json') =>
      fetch(`${stack.gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': contentType }, body });
    for (const body of ['{"model":', '', '[1,2]', '{"model":"x","messages":"hi"}']) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    }
    const huge = await rawRequest(stack.gateway.url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) },
      body: '{"model":"gpt-test","messages":[',
    });
    expect(huge.status).toBe(413);
    expect((JSON.parse(huge.body) as { error: { message: string; type: string } }).error.type).toBe('invalid_request_error');
    expect((await fetch(`${stack.gateway.url}/nowhere`)).status).toBe(404);
  });

  it('passes GET /v1/models through', async () => {
    const models = await stack.client().models.list();
    expect(models.data.map((model) => model.id)).toEqual(['gpt-scripted']);
  });

  it('passes every other /v1 endpoint through: method, path, query, body, status and error body', async () => {
    const embeddings = await stack
      .client()
      .embeddings.create({ model: 'text-embedding-3-small', input: ['zsh', 'neovim'], encoding_format: 'float' });
    expect(embeddings.data.map((item) => item.embedding[0])).toEqual([3, 6]);
    const sent = stack.upstream.requests.at(-1);
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/v1/embeddings',
      body: { model: 'text-embedding-3-small', input: ['zsh', 'neovim'], encoding_format: 'float' },
    });
    expect(sent?.body).not.toHaveProperty('tools');

    await stack.client({ pool: 'work' }).embeddings.create({ model: 'm', input: 'x', encoding_format: 'float' });
    expect(stack.upstream.requests.at(-1)?.path).toBe('/v1/embeddings');

    const removed = await fetch(`${stack.gateway.url}/v1/responses/resp_123?include=usage`, { method: 'DELETE' });
    expect(stack.upstream.requests.at(-1)).toMatchObject({ method: 'DELETE', path: '/v1/responses/resp_123?include=usage' });
    expect(removed.status).toBe(404);
    expect(((await removed.json()) as { error: { message: string } }).error.message).toBe(
      'Unknown request URL: DELETE /v1/responses/resp_123?include=usage',
    );
  });

  it('refuses a path that leaves /v1/ before anything reaches the upstream, and resolves an absolute-form target', async () => {
    const before = stack.upstream.requests.length;
    for (const path of [
      '/v1/../../admin/keys',
      '/pools/work/v1/../../admin/keys',
      '/v1/%2e%2e/%2e%2e/admin/keys',
      '/pools/work/v1/%2E%2E/%2E%2E/admin/keys',
      '/v1/models%2f..%2f..%2fadmin',
      '/v1/models/..%5cadmin',
    ]) {
      for (const headers of [{}, { 'anthropic-version': '2023-06-01' }] as Record<string, string>[]) {
        const response = await rawRequest(stack.gateway.url, { method: 'GET', path, headers: { authorization: 'Bearer sk-client', ...headers } });
        because(path, () => expect(response.status).toBe(400));
        because(path, () => expect(response.body).toContain('"invalid_request_error"'));
      }
    }
    expect(stack.upstream.requests.length).toBe(before);

    // `GET http://x/v1/models HTTP/1.1`: the path is what counts, never `/v1p://x/...`.
    const absolute = await rawRequest(stack.gateway.url, {
      method: 'GET',
      path: 'http://x/v1/models',
      headers: { authorization: 'Bearer sk-client' },
    });
    expect(absolute.status).toBe(200);
    expect(stack.upstream.requests.at(-1)?.path).toBe('/v1/models');
  });

  it('counts requests, upstream latency and errors in /metrics', async () => {
    const text = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(text).toMatch(/engram_gateway_requests_total\{route="chat.completions",status="200"\} \d+/);
    expect(text).toMatch(/engram_gateway_upstream_latency_seconds_count \d+/);
    expect(text).toMatch(/engram_gateway_errors_total\{kind="upstream"\} \d+/);
    expect(text).toContain('engram_gateway_tier1_chars_injected_total');
    expect(text).toContain('engram_gateway_memory_tool_rounds_total');
  });

  it('keeps proxying when memory is down, and /readyz names the missing dependency', async () => {
    expect((await fetch(`${stack.gateway.url}/readyz`)).status).toBe(200);
    await stack.memory?.stop();
    // Every request is answered; once the gateway has noticed the outage (its background probe runs
    // every second) requests go out as the client sent them: no memory tools.
    await eventually(
      async () =>
        expect(
          await (async () => {
            const answer = await ask('hello');
            expect(answer.choices[0]?.message.content).toBe('ok from upstream');
            return stack.upstream.chatRequests.at(-1)?.body.tools;
          })(),
        ).toBeUndefined(),
      { timeout: 10_000, interval: 200 },
    );
    const ready = await fetch(`${stack.gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, checks: { memory: 'down', redis: 'up' } });
    expect((await ask('hello')).choices[0]?.message.content).toBe('ok from upstream');
    // Memory REST says so with a 503 and an error body, like a timeout; a refused socket is no 500.
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', JSON.stringify({ content: 'I deploy on a NAS' })],
    ] as const) {
      const rest = await fetch(`${stack.gateway.url}/engram/pools/default/memories`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body ? { body } : {}),
      });
      because(method, () => expect(rest.status).toBe(503));
      expect(await rest.json()).toMatchObject({ error: { type: 'service_unavailable', code: 'unavailable' } });
    }

    await stack.stopRedis();
    expect((await ask('hello')).choices[0]?.message.content).toBe('ok from upstream');
    await eventually(
      async () =>
        expect(await ((await (await fetch(`${stack.gateway.url}/readyz`)).json()) as { checks: { redis: string } }).checks.redis).toBe('down'),
      { timeout: 10_000 },
    );
    expect((await fetch(`${stack.gateway.url}/healthz`)).status).toBe(200);
  });
});
