import { describe, expect, it } from '@jest/globals';
import { MemoryError, MemoryPattern, type MemoryErrorCode } from '@engram/contracts';
import { CONTENT_MAX_CHARS } from '@engram/domain';
import { GatewayTier1Cache } from '@engram/gateway-engine';
import { memoryServicePerTest } from '../../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess, observed } from '../../../../tests/support/memory-in-process.js';
import { httpErrorOf, MemoryRestService } from './memory-rest.service.js';

/** Memory REST in front of the real memory service; `memory.calls` are the requests it was sent. */

const under = memoryServicePerTest();
const live = memoryInProcess(() => under.service);

function newRestService() {
  const memory = observed(live);
  const cache = new GatewayTier1Cache(memory, { ttlMs: 60_000 });
  return { rest: new MemoryRestService(memory, cache), memory, cache, patterns: () => memory.calls.map((call) => call.pattern) };
}

const entries = async (pool = 'team') => live.call(MemoryPattern.List, { pool, archived: false });
const seed = (content: string, extra: { type?: 'USER' | 'MEMORY'; source?: 'llm' | 'user' } = {}) =>
  live.call(MemoryPattern.Store, { pool: 'team', actor: 'user', content, category: 'project', ...extra });

describe('MemoryRestService', () => {
  it('stores what a person writes as actor and source user, and drops the pool’s cached Tier 1', async () => {
    const { rest, memory, cache, patterns } = newRestService();
    await cache.get('team', 'r0');
    await rest.create('team', { content: '  uses pnpm  ', category: 'preference' }, {}, 'r1');
    expect(memory.calls[1]).toEqual({
      pattern: MemoryPattern.Store,
      request: { pool: 'team', content: 'uses pnpm', category: 'preference', source: 'user', actor: 'user', requestId: 'r1', causationId: 'r1' },
    });
    expect(await entries()).toEqual([expect.objectContaining({ content: 'uses pnpm', source: 'user', category: 'preference' })]);
    expect((await cache.get('team', 'r2')).block).toContain('uses pnpm');
    expect(patterns()).toEqual([MemoryPattern.Tier1, MemoryPattern.Store, MemoryPattern.Tier1]);
  });

  it('measures content as memory stores it (line endings count once), as memory would, so the two never disagree', async () => {
    const { rest, memory } = newRestService();
    const stored = `${'x'.repeat(CONTENT_MAX_CHARS - 2)}\ny`;
    await rest.create('team', { content: stored.replace('\n', '\r\n') }, {}, 'r1');
    expect((await entries()).map((entry) => entry.content)).toEqual([stored]);
    await expect(rest.create('team', { content: `${stored}z` }, {}, 'r2')).rejects.toMatchObject({
      status: 400,
      message: `content: ${CONTENT_MAX_CHARS + 1} characters; the limit is ${CONTENT_MAX_CHARS}`,
    });
    expect(memory.calls).toHaveLength(1);
  });

  it('stores a second copy of what the pool already says unless the person asks otherwise with ?dedupe=true', async () => {
    const { rest } = newRestService();
    const first = (await rest.create('team', { content: 'uses pnpm' }, { dedupe: 'true' }, 'r1')) as { id: string };
    expect(await rest.create('team', { content: 'uses pnpm' }, { dedupe: 'true' }, 'r2')).toMatchObject({ id: first.id, existing: true });
    await rest.create('team', { content: 'uses pnpm' }, { dedupe: 'false' }, 'r3');
    expect(await entries()).toHaveLength(2);
    await expect(rest.create('team', { content: 'uses pnpm' }, { dedupe: 'yes' }, 'r4')).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('dedupe'),
    });
  });

  it('refuses a body it does not know with a 400 naming the field, before memory is asked', async () => {
    const { rest, memory } = newRestService();
    await expect(rest.create('team', { content: '' }, {}, 'r1')).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request',
      message: expect.stringContaining('content'),
    });
    await expect(rest.update('team', 'm1', { content: 'x', colour: 'red' }, 'r1')).rejects.toMatchObject({ status: 400 });
    await expect(rest.list('team', { limit: '0' }, 'r1')).rejects.toMatchObject({ status: 400, message: expect.stringContaining('limit') });
    expect(memory.calls).toEqual([]);
  });

  it('answers memory’s refusals with the HTTP status a person can act on', async () => {
    const { rest } = newRestService();
    await expect(rest.remove('team', 'nosuch', false, 'r1')).rejects.toMatchObject({ status: 404, type: 'invalid_request_error', code: 'not_found' });
    await expect(rest.list('team', { cursor: 'not-a-cursor' }, 'r2')).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    const entry = (await rest.create('team', { content: 'uses pnpm' }, {}, 'r3', 'key-1')) as { id: string };
    await expect(rest.create('team', { content: 'uses bun' }, {}, 'r4', 'key-1')).rejects.toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
    });
    await rest.remove('team', entry.id, true, 'r5');
    await expect(rest.create('team', { content: 'uses pnpm' }, {}, 'r6', 'key-1')).rejects.toMatchObject({ status: 410, code: 'gone' });
    await under.service.close();
    await expect(rest.get('team', entry.id)).rejects.toMatchObject({ status: 503, type: 'service_unavailable', code: 'unavailable' });
  });

  it('maps every code of memory to its status, including those a healthy memory does not give', () => {
    for (const [code, status, type] of [
      ['not_found', 404, 'invalid_request_error'],
      ['invalid_request', 400, 'invalid_request_error'],
      ['conflict', 409, 'invalid_request_error'],
      ['idempotency_key_reused', 422, 'invalid_request_error'],
      ['gone', 410, 'invalid_request_error'],
      ['unavailable', 503, 'service_unavailable'],
      ['unauthorized', 503, 'service_unavailable'],
      ['internal', 500, 'server_error'],
    ] as const satisfies readonly (readonly [MemoryErrorCode, number, string])[]) {
      expect(httpErrorOf(new MemoryError(code, `refused with ${code}`))).toMatchObject({ status, type, code });
    }
  });

  it('searches without recording references when the list has a query, and pages otherwise', async () => {
    const { rest, memory } = newRestService();
    const entry = await seed('uses pnpm for installs');
    expect(await rest.list('team', { q: 'pnpm', archived: 'true' }, 'r1')).toEqual({
      data: [expect.objectContaining({ id: entry.id, score: expect.any(Number), effectiveConfidence: expect.any(Number) })],
      nextCursor: null,
    });
    expect(await rest.list('team', { archived: 'false', limit: '5', sort: 'confidence', confirmed: 'false', source: 'user' }, 'r2')).toEqual({
      data: [expect.objectContaining({ id: entry.id, effectiveConfidence: expect.any(Number) })],
      nextCursor: null,
    });
    expect(memory.calls).toEqual([
      { pattern: MemoryPattern.Search, request: { pool: 'team', query: 'pnpm', includeArchived: true, recordReference: false, requestId: 'r1' } },
      {
        pattern: MemoryPattern.Page,
        request: { pool: 'team', sort: 'confidence', confirmed: false, archived: false, source: 'user', limit: 5, requestId: 'r2' },
      },
    ]);
    await under.service.close();
    const events = await (await under.reopen()).events({ pool: 'team' });
    expect(events.data.map((event) => event.type)).toEqual(['memory.stored']);
  });

  it('narrows search hits by type, confirmed and source, which the search itself does not filter', async () => {
    const { rest } = newRestService();
    await seed('uses pnpm', { type: 'MEMORY', source: 'llm' });
    expect((await rest.list('team', { q: 'pnpm', type: 'USER' }, 'r1')).data).toEqual([]);
    expect((await rest.list('team', { q: 'pnpm', type: 'MEMORY', confirmed: 'false', source: 'llm' }, 'r1')).data).toHaveLength(1);
    expect((await rest.list('team', { q: 'pnpm', source: 'user' }, 'r1')).data).toEqual([]);
    await expect(rest.list('team', { sort: 'size' }, 'r1')).rejects.toMatchObject({ status: 400 });
  });

  it('lists the pools a key reaches with their Tier 1 size: all known for *, the granted ones otherwise', async () => {
    const { rest } = newRestService();
    await live.call(MemoryPattern.Store, {
      pool: 'team',
      actor: 'user',
      content: 'prefers tabs over spaces in every repository',
      category: 'preference',
    });
    await seed('deploys on Tuesdays');
    const block = (await live.call(MemoryPattern.Tier1, { pool: 'team' })).block;
    const [team] = (await rest.pools({ all: true }, 'r1')).data as {
      pool: string;
      active: number;
      tier1: { chars: number; tokens: number; ids: number };
    }[];
    expect(team).toMatchObject({ pool: 'team', active: 2, tier1: { chars: block.length } });
    // Words are fewer o200k tokens than characters, and never none.
    expect(team?.tier1.tokens).toBeGreaterThan(0);
    expect(team?.tier1.tokens).toBeLessThan(block.length);
    expect((await rest.pools({ all: false, pools: ['solo'] }, 'r1')).data).toEqual([
      { pool: 'solo', active: 0, archived: 0, byCategory: {}, lastSeq: 0, lastChangedAt: null, tier1: { chars: 0, tokens: 0, ids: 0 } },
    ]);
  });

  it('turns one update into the commands it names, in order, and answers the entry as it ends', async () => {
    const { rest, patterns } = newRestService();
    const entry = await seed('uses npm');
    expect(await rest.update('team', entry.id, { content: 'uses bun', confirmed: true, archived: true }, 'r1')).toMatchObject({
      content: 'uses bun',
      isConfirmed: true,
      isArchived: true,
    });
    expect(patterns()).toEqual([MemoryPattern.Update, MemoryPattern.Confirm, MemoryPattern.Archive]);
    expect(await rest.update('team', entry.id, {}, 'r2')).toMatchObject({ content: 'uses bun' });
    expect(patterns().at(-1)).toBe(MemoryPattern.Get);
  });

  it('purges only when asked to, and deletes with the reason a person gives otherwise', async () => {
    const { rest, memory } = newRestService();
    const purged = await seed('my old address');
    const deleted = await seed('uses yarn');
    await rest.remove('team', purged.id, true, 'r1');
    await rest.remove('team', deleted.id, false, 'r2');
    expect(memory.calls).toEqual([
      { pattern: MemoryPattern.Purge, request: { pool: 'team', id: purged.id, actor: 'user', requestId: 'r1', causationId: 'r1' } },
      {
        pattern: MemoryPattern.Delete,
        request: { pool: 'team', id: deleted.id, actor: 'user', requestId: 'r2', causationId: 'r2', reason: 'deleted by a person' },
      },
    ]);
    await expect(rest.get('team', purged.id)).rejects.toMatchObject({ status: 404 });
    expect(await rest.get('team', deleted.id)).toMatchObject({ isArchived: true });
  });
});
