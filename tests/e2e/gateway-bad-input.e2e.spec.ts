import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSurfacesStack, type SurfacesStack } from '../support/surfaces-stack.js';

/** Bad bodies a client (or a fuzzer) sends: each a 4xx in its surface's shape, never a 500, a 502 or a reset. */
describe('gateway refuses bad request bodies before any work', () => {
  let stack: SurfacesStack;

  beforeAll(async () => {
    stack = await startSurfacesStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const upstreamRequests = (): number => stack.anthropic.requests.length + stack.responses.requests.length;
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
      body,
    });

  const user = [{ role: 'user', content: 'hi' }];
  const surfaces = [
    ['/v1/chat/completions', { model: 'gpt-test', messages: user }, 'openai'],
    ['/v1/responses', { model: 'gpt-test', input: 'hi' }, 'openai'],
    ['/v1/messages', { model: 'claude-test', max_tokens: 16, messages: user }, 'anthropic'],
    ['/v1/messages/count_tokens', { model: 'claude-test', messages: user }, 'anthropic'],
  ] as const;

  it.each(surfaces)('%s answers a body nested 10,000 deep with a 400 naming the limit', async (path, valid, shape) => {
    const before = upstreamRequests();
    const deep = JSON.stringify({ ...valid, metadata: 'NEST' }).replace('"NEST"', '['.repeat(10_000) + ']'.repeat(10_000));
    for (const headers of [{}, { 'x-engram-memory': 'off' }] as Record<string, string>[]) {
      const response = await post(path, deep, headers);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string; type: string } };
      expect(body.error.message).toBe('the request body nests arrays and objects deeper than 128 levels');
      expect(body.error.type).toBe('invalid_request_error');
      if (shape === 'anthropic') expect(body).toMatchObject({ type: 'error' });
    }
    expect(upstreamRequests()).toBe(before);
  });

  it.each(surfaces.filter(([path]) => path !== '/v1/messages/count_tokens'))(
    '%s answers tools: [null] with a 400 naming the field',
    async (path, valid, shape) => {
      const before = upstreamRequests();
      const response = await post(path, JSON.stringify({ ...valid, tools: [null] }));
      expect(response.status).toBe(400);
      const body = (await response.json()) as { type?: string; error: { message: string; type: string } };
      if (shape === 'anthropic') {
        expect(body).toEqual({
          type: 'error',
          error: { type: 'invalid_request_error', message: 'tools.0: Input should be a valid dictionary or object to extract fields from' },
        });
      } else {
        expect(body.error).toMatchObject({
          message: "Invalid type for 'tools[0]': expected an object, but got null instead.",
          type: 'invalid_request_error',
        });
      }
      expect(upstreamRequests()).toBe(before);
    },
  );

  it('answers a too-deep memory REST body with a 400 too', async () => {
    const response = await post('/engram/pools/default/memories', `{"content":"x","extra":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('json_too_deep');
  });
});
