import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because } from '@engram/testing';
import { contentText, startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import { rawRequest } from '../support/raw-http.js';
import type { RecordedRequest } from '../support/scripted-http.js';
import { startGateway } from '../support/stack.js';
import { callTools, say, type ChatReply, type ChatRequestJson } from '../support/scripted-openai-upstream.js';

/** Searches memory when asked to, then repeats the result; otherwise a plain answer. */
function model(request: RecordedRequest): ChatReply {
  const messages = (request.body as ChatRequestJson).messages;
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return say(`Found: ${contentText(last.content)}`);
  const user = contentText(last?.content);
  if (user.startsWith('SEARCH ')) return callTools({ name: 'memory_search', arguments: { query: user.slice(7) } });
  return say('ok');
}

const KEYS = 'alpha-key=alpha+shared,admin-key=*';

describe('gateway keys and pools', () => {
  let stack: GatewayStack;
  let rest: (method: string, path: string, key: string | undefined, body?: unknown, headers?: Record<string, string>) => Promise<Response>;

  beforeAll(async () => {
    stack = await startGatewayStack({
      responder: model,
      gatewayEnv: { ENGRAM_API_KEYS: KEYS, UPSTREAM_API_KEY: 'sk-upstream', METRICS_TOKEN: 'scrape-secret' },
    });
    rest = (method, path, key, body, headers = {}) =>
      fetch(`${stack.gateway.url}${path}`, {
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const systemOfLastUpstreamRequest = (): string => {
    const messages = stack.upstream.chatRequests.at(-1)?.body.messages ?? [];
    return messages[0]?.role === 'system' ? contentText(messages[0].content) : '';
  };

  it('serves /metrics to an Engram key or METRICS_TOKEN only', async () => {
    for (const key of [undefined, 'wrong', 'scrape-secre']) {
      const refused = await rest('GET', '/metrics', key);
      because(String(key), () => expect(refused.status).toBe(401));
      expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    }
    for (const key of ['alpha-key', 'scrape-secret']) {
      const allowed = await rest('GET', '/metrics', key);
      because(key, () => expect(allowed.status).toBe(200));
      expect(await allowed.text()).toContain('engram_gateway_requests_total');
    }
  });

  it('rejects missing and unknown keys with 401, and never forwards the Engram key upstream', async () => {
    await expect(
      stack.client({ apiKey: 'wrong' }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({
      status: 401,
      error: { code: 'invalid_api_key' },
    });
    expect((await rest('GET', '/engram/pools/alpha/memories', undefined)).status).toBe(401);
    expect((await rest('GET', '/v1/models', 'nope')).status).toBe(401);
    expect((await rest('POST', '/v1/embeddings', undefined, { model: 'm', input: 'x' })).status).toBe(401);
    expect((await rest('POST', '/pools/other/v1/embeddings', 'alpha-key', { model: 'm', input: 'x' })).status).toBe(403);
    const embedded = await rest('POST', '/pools/shared/v1/embeddings', 'alpha-key', { model: 'm', input: 'x' });
    expect(embedded.status).toBe(200);
    expect(stack.upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream');

    await stack.client({ apiKey: 'alpha-key' }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(stack.upstream.chatRequests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream');
  });

  it('sends no credentials upstream in keyed mode without UPSTREAM_API_KEY, rather than the Engram key', async () => {
    const keyedOnly = await startGateway({
      UPSTREAM_BASE_URL: stack.upstream.baseUrl,
      REDIS_URL: stack.redis.url,
      ...stack.memory!.clientEnv,
      ENGRAM_API_KEYS: KEYS,
    });
    try {
      const client = new OpenAI({ baseURL: `${keyedOnly.url}/v1`, apiKey: 'alpha-key', maxRetries: 0 });
      await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      const seen = stack.upstream.chatRequests.at(-1)?.headers;
      expect(seen?.authorization).toBeUndefined();
      expect(JSON.stringify(seen)).not.toContain('alpha-key');
    } finally {
      await keyedOnly.stop();
    }
  });

  it('keeps each pool to itself: Tier 1, search and REST', async () => {
    const stored = await rest('POST', '/engram/pools/alpha/memories', 'alpha-key', {
      content: 'Alpha team deploys on Fridays',
      type: 'USER',
      category: 'preference',
    });
    expect(stored.status).toBe(201);
    const entry = (await stored.json()) as { id: string; pool: string };
    expect(entry.pool).toBe('alpha');

    // The key's first pool is its default.
    await stack.client({ apiKey: 'alpha-key' }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(systemOfLastUpstreamRequest()).toContain('Alpha team deploys on Fridays');

    // Another pool, chosen by path prefix, sees nothing of alpha.
    await stack.client({ apiKey: 'admin-key', pool: 'beta' }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(systemOfLastUpstreamRequest()).not.toContain('Alpha team');
    const search = await stack
      .client({ apiKey: 'admin-key', pool: 'beta' })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'SEARCH Fridays' }] });
    expect(search.choices[0]?.message.content).toBe('Found: No memories match "Fridays".');
    const inAlpha = await stack
      .client({ apiKey: 'admin-key', headers: { 'x-engram-pool': 'alpha' } })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'SEARCH Fridays' }] });
    // Alpha's search finds it in the Tier 1 block of this very request, and names its id for the model to cite.
    expect(inAlpha.choices[0]?.message.content).toMatch(
      /^Found: Only memories already in your memory block match "Fridays":\n\[id:[\w-]+\] Alpha team deploys on Fridays$/,
    );

    const betaList = (await (await rest('GET', '/engram/pools/beta/memories', 'admin-key')).json()) as { data: unknown[] };
    expect(betaList.data).toEqual([]);
  });

  it('answers 403 for a pool the key was not granted, by path, header or REST', async () => {
    const alpha = stack.client({ apiKey: 'alpha-key', pool: 'beta' });
    await expect(alpha.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 403,
      error: { code: 'pool_forbidden' },
    });
    await expect(
      stack
        .client({ apiKey: 'alpha-key', headers: { 'x-engram-pool': 'beta' } })
        .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 403 });
    expect((await rest('GET', '/engram/pools/beta/memories', 'alpha-key')).status).toBe(403);
    expect((await rest('GET', '/engram/pools/shared/memories', 'alpha-key')).status).toBe(200);
  });

  it('answers 400 for malformed pool names, never touching a path', async () => {
    const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const headers = { authorization: 'Bearer admin-key', 'content-type': 'application/json' };
    for (const pool of ['UPPER', '..', '%2E%2E', '-dash', 'a'.repeat(65), 'sp%20ace', '..%2Fetc', 'a%00b']) {
      const viaPath = await rawRequest(stack.gateway.url, { method: 'POST', path: `/pools/${pool}/v1/chat/completions`, headers, body: chat });
      expect(viaPath.status).toBe(400);
      expect((JSON.parse(viaPath.body) as { error: { code: string } }).error.code).toBe('invalid_pool');
      const viaRest = await rawRequest(stack.gateway.url, { method: 'GET', path: `/engram/pools/${pool}/memories`, headers });
      expect(viaRest.status).toBe(400);
    }
    const badHeader = await rest(
      'POST',
      '/v1/chat/completions',
      'admin-key',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
      { 'x-engram-pool': '../etc' },
    );
    expect(badHeader.status).toBe(400);
    expect(((await badHeader.json()) as { error: { code: string } }).error.code).toBe('invalid_pool');
    expect((await rest('POST', '/pools/UPPER/v1/chat/completions', 'admin-key', { model: 'm', messages: [] })).status).toBe(400);
  });

  it('serves memory REST: create, search, update, soft delete, purge, tier1 and events', async () => {
    const key = 'admin-key';
    const created = (await (
      await rest('POST', '/engram/pools/gamma/memories', key, { content: 'Gamma uses PostgreSQL 16', category: 'project' })
    ).json()) as { id: string };
    expect((await rest('POST', '/engram/pools/gamma/memories', key, { content: '' })).status).toBe(400);
    expect((await rest('POST', '/engram/pools/gamma/memories', key, { content: 'x', category: 'nonsense' })).status).toBe(400);

    const found = (await (await rest('GET', '/engram/pools/gamma/memories?q=PostgreSQL', key)).json()) as { data: { id: string }[] };
    expect(found.data.map((item) => item.id)).toEqual([created.id]);

    const patched = await rest('PATCH', `/engram/pools/gamma/memories/${created.id}`, key, { content: 'Gamma uses PostgreSQL 17', confirmed: true });
    expect(await patched.json()).toMatchObject({ id: created.id, content: 'Gamma uses PostgreSQL 17', isConfirmed: true });
    expect((await rest('PATCH', '/engram/pools/gamma/memories/does-not-exist', key, { content: 'x' })).status).toBe(404);

    const deleted = await rest('DELETE', `/engram/pools/gamma/memories/${created.id}`, key);
    expect(await deleted.json()).toMatchObject({ id: created.id, isArchived: true });
    const archived = (await (await rest('GET', '/engram/pools/gamma/memories?archived=true', key)).json()) as { data: { id: string }[] };
    expect(archived.data.map((item) => item.id)).toContain(created.id);

    const purged = await rest('DELETE', `/engram/pools/gamma/memories/${created.id}?purge=true`, key);
    expect(await purged.json()).toMatchObject({ id: created.id, purged: true });

    const tier1 = (await (await rest('GET', '/engram/pools/gamma/tier1', key)).json()) as {
      pool: string;
      block: string;
      seq: number;
      promptTokens: number;
    };
    expect(tier1).toMatchObject({ pool: 'gamma' });
    // What memory adds to each upstream request: here the six tool definitions alone (the block is empty).
    expect(tier1.promptTokens).toBeGreaterThan(150);
    expect(tier1.promptTokens).toBeLessThanOrEqual(400);
    const events = (await (await rest('GET', '/engram/pools/gamma/events?after=0', key)).json()) as { data: { type: string; pool: string }[] };
    expect(events.data.map((event) => event.type)).toEqual(
      expect.arrayContaining(['memory.stored', 'memory.updated', 'memory.deleted', 'memory.purged']),
    );
    expect(events.data.every((event) => event.pool === 'gamma')).toBe(true);
    expect(JSON.stringify(events.data)).not.toContain('PostgreSQL');
  });

  it('stores once when a write that timed out against a stalled memory service is retried with the same Idempotency-Key', async () => {
    const key = 'admin-key';
    const body = { content: 'Zeta deploys on Fridays', category: 'project' };
    const headers = { 'idempotency-key': 'zeta-create-1' };
    const memory = stack.memory!.process.child;
    memory.kill('SIGSTOP');
    let timedOut: Response;
    try {
      timedOut = await rest('POST', '/engram/pools/zeta/memories', key, body, headers);
    } finally {
      memory.kill('SIGCONT');
    }
    expect(timedOut.status).toBe(503);
    const retried = await rest('POST', '/engram/pools/zeta/memories', key, body, headers);
    expect(retried.status).toBe(201);
    const entry = (await retried.json()) as { id: string; content: string };
    expect(entry.content).toBe(body.content);
    const again = (await (await rest('POST', '/engram/pools/zeta/memories', key, body, headers)).json()) as { id: string };
    expect(again.id).toBe(entry.id);
    const listed = (await (await rest('GET', '/engram/pools/zeta/memories', key)).json()) as { data: { id: string }[] };
    expect(listed.data.map((item) => item.id)).toEqual([entry.id]);
    // The same key with another body is the caller's mistake, not a silent answer with the first entry.
    const reused = await rest('POST', '/engram/pools/zeta/memories', key, { ...body, content: 'Zeta deploys on Mondays' }, headers);
    expect(reused.status).toBe(422);
    expect(await reused.json()).toEqual({ error: expect.objectContaining({ type: 'invalid_request_error', code: 'idempotency_key_reused' }) });
    // A malformed key is the caller's mistake.
    expect((await rest('POST', '/engram/pools/zeta/memories', key, body, { 'idempotency-key': 'two words' })).status).toBe(400);
  });

  it('answers a retry with the Idempotency-Key of a purged entry with 410 Gone, and brings nothing back', async () => {
    const key = 'admin-key';
    const body = { content: 'the user secret is W', type: 'USER', category: 'preference' };
    const headers = { 'idempotency-key': 'eta-create-1' };
    const created = await rest('POST', '/engram/pools/eta/memories', key, body, headers);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await rest('DELETE', `/engram/pools/eta/memories/${id}?purge=true`, key)).status).toBe(200);

    const retried = await rest('POST', '/engram/pools/eta/memories', key, body, headers);
    expect(retried.status).toBe(410);
    expect(await retried.json()).toEqual({ error: expect.objectContaining({ code: 'gone', message: expect.stringContaining(id) }) });
    expect((await rest('GET', `/engram/pools/eta/memories/${id}`, key)).status).toBe(404);
    const found = (await (await rest('GET', '/engram/pools/eta/memories?q=secret', key)).json()) as { data: unknown[] };
    expect(found.data).toEqual([]);
    // A new key is a new request: the person may store the text again, under a new id.
    const anew = await rest('POST', '/engram/pools/eta/memories', key, body, { 'idempotency-key': 'eta-create-2' });
    expect(anew.status).toBe(201);
    expect(((await anew.json()) as { id: string }).id).not.toBe(id);
  });

  it("pages a pool's events with limit and cursor, reads one entry's history, and keeps both to granted keys", async () => {
    type Page = { data: { seq: number; type: string; pool: string; data: { id?: string } }[]; nextCursor: string | null };
    const key = 'admin-key';
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const created = (await (await rest('POST', '/engram/pools/delta/memories', key, { content: `delta fact ${index}` })).json()) as { id: string };
      ids.push(created.id);
      await rest('POST', '/engram/pools/epsilon/memories', key, { content: `epsilon fact ${index}` });
    }
    await rest('PATCH', `/engram/pools/delta/memories/${ids[2]}`, key, { content: 'delta fact two, revised' });

    const seen: Page['data'] = [];
    let next = '/engram/pools/delta/events?after=0&limit=2';
    for (;;) {
      const page = (await (await rest('GET', next, key)).json()) as Page;
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data);
      if (page.nextCursor === null) break;
      next = `/engram/pools/delta/events?limit=2&cursor=${encodeURIComponent(page.nextCursor)}`;
    }
    expect(seen.map((event) => event.type)).toEqual([...Array(5).fill('memory.stored'), 'memory.updated']);
    expect(seen.every((event) => event.pool === 'delta')).toBe(true);
    expect(seen.map((event) => event.seq)).toEqual([...seen.map((event) => event.seq)].sort((a, b) => a - b));

    const history = (await (await rest('GET', `/engram/pools/delta/events?memoryId=${ids[2]}`, key)).json()) as Page;
    expect(history).toMatchObject({ nextCursor: null });
    expect(history.data.map((event) => [event.type, event.data.id])).toEqual([
      ['memory.stored', ids[2]],
      ['memory.updated', ids[2]],
    ]);
    const bad = await rest('GET', '/engram/pools/delta/events?cursor=bogus', key);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/cursor/);
    expect((await rest('GET', `/engram/pools/delta/events?memoryId=${ids[2]}`, 'alpha-key')).status).toBe(403);
  });
});
