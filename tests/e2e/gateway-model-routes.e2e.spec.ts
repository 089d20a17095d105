import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import { say } from '../support/scripted-openai-upstream.js';

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly requestId: string | undefined;
  /** The names of the headers sent (Date's value changes; x-request-id's is compared apart). */
  readonly headerNames: readonly string[];
  readonly body: unknown;
}

/**
 * The gateway serves a model request with a JSON body and a Content-Length before Fastify sees it
 * (apps/gateway/src/http/model-routes.ts) and leaves every other request to Fastify, whose
 * controllers serve the same routes. The same bytes sent both ways (with a Content-Length, then
 * chunked) must get the same answer and the same access line.
 */
describe('the model routes answer alike whether the gateway takes them before Fastify or through it', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startGatewayStack({ responder: () => say('Hello from the model.'), gatewayEnv: { LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** POSTs `body`, announced with its Content-Length or sent chunked (Node's default without one). */
  const send = (path: string, body: string, chunked: boolean, headers: Record<string, string> = {}): Promise<Answer> => {
    const target = new URL(stack.gateway.url);
    return new Promise((resolve, reject) => {
      const sent = request(
        {
          host: target.hostname,
          port: target.port,
          method: 'POST',
          path,
          headers: {
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
            ...(chunked ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
            ...headers,
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              contentType: response.headers['content-type'],
              requestId: response.headers['x-request-id'] as string | undefined,
              headerNames: Object.keys(response.headers).sort(),
              body: withoutIds(text),
            }),
          );
        },
      );
      sent.on('error', reject);
      if (chunked && body === '') sent.flushHeaders();
      if (body !== '') sent.write(body);
      sent.end();
    });
  };

  const chat = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Which shell do I use?' }] });
  const cases: readonly (readonly [string, string, string])[] = [
    ['a chat completion', '/v1/chat/completions', chat],
    ['a chat completion in a pool', '/pools/team/v1/chat/completions', chat],
    ['a chat completion with a query string', '/v1/chat/completions?api-version=1', chat],
    ['a pool name that is not one', '/pools/Team/v1/chat/completions', chat],
    ['a body that is not JSON', '/v1/chat/completions', '{"model":'],
    ['an empty body', '/v1/chat/completions', ''],
    ['a chat body without messages', '/v1/chat/completions', '{"model":"gpt-test"}'],
    ['a Responses body with tools: [null]', '/v1/responses', '{"model":"gpt-test","tools":[null]}'],
    ['an Anthropic body without messages', '/v1/messages', '{"model":"claude-test","max_tokens":16}'],
    ['an Anthropic body in a pool', '/pools/team/v1/messages', '{"model":"claude-test","max_tokens":16,"tools":[null]}'],
  ];

  it.each(cases)('%s: the same status, body and headers both ways', async (_name, path, body) => {
    const taken = await send(path, body, false, { 'x-request-id': 'taken-first' });
    const left = await send(path, body, true, { 'x-request-id': 'left-to-fastify' });
    expect({ ...left, requestId: undefined }).toEqual({ ...taken, requestId: undefined });
    expect([taken.requestId, left.requestId]).toEqual(['taken-first', 'left-to-fastify']);
  });

  it('a request without x-request-id gets a new one both ways', async () => {
    for (const chunked of [false, true]) {
      expect((await send('/v1/chat/completions', chat, chunked)).requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('both ways log one access line with the route pattern, the path without its query and the status', async () => {
    const lines = (): Record<string, unknown>[] =>
      stack.gateway.process
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"request"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    await send('/pools/team/v1/chat/completions?q=secret', chat, false, { 'x-request-id': 'logged-taken' });
    await send('/pools/team/v1/chat/completions?q=secret', chat, true, { 'x-request-id': 'logged-left' });
    await eventually(() => expect(lines().filter((line) => String(line['requestId']).startsWith('logged-'))).toHaveLength(2));
    const fields = (id: string) => {
      const line = lines().find((logged) => logged['requestId'] === id);
      return { method: line?.['method'], path: line?.['path'], route: line?.['route'], status: line?.['status'], timed: typeof line?.['ms'] };
    };
    expect(fields('logged-taken')).toEqual({
      method: 'POST',
      path: '/pools/team/v1/chat/completions',
      route: '/pools/:pool/v1/chat/completions',
      status: 200,
      timed: 'number',
    });
    expect(fields('logged-left')).toEqual(fields('logged-taken'));
  });

  it('the open-mode guard refuses a JSON POST for another host name both ways, before the upstream is called', async () => {
    const before = stack.upstream.requests.length;
    const taken = await send('/v1/chat/completions', chat, false, { host: 'evil.example' });
    const left = await send('/v1/chat/completions', chat, true, { host: 'evil.example' });
    expect(taken.status).toBe(403);
    expect({ ...left, requestId: undefined }).toEqual({ ...taken, requestId: undefined });
    expect(stack.upstream.requests.length).toBe(before);
  });
});

/** A chat completion's id and creation time differ per answer; everything else must not. */
function withoutIds(text: string): unknown {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    delete body['id'];
    delete body['created'];
    return body;
  } catch {
    return text;
  }
}
