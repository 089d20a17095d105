import { describe, expect, it } from '@jest/globals';
import { MemoryError, MemoryPattern, type MemoryClient, type MemoryErrorCode, type Tier1Response } from '@engram/contracts';
import { CONTENT_MAX_CHARS } from '@engram/domain';
import { GatewayTier1Cache } from '@engram/gateway-engine';
import { memoryEntry } from '@engram/testing';
import { MemoryRestService } from './memory-rest.service.js';

type Call = readonly [pattern: string, request: Record<string, unknown>];

/** The memory service behind the RPC client: records each call; answers with an entry, a Tier 1, or the error it is told to. */
class RecordingMemory implements Pick<MemoryClient, 'call'> {
  readonly calls: Call[] = [];
  failWith: MemoryErrorCode | undefined;

  call: MemoryClient['call'] = async (pattern, request) => {
    this.calls.push([pattern, request as Record<string, unknown>]);
    if (this.failWith) throw new MemoryError(this.failWith, `refused with ${this.failWith}`);
    const { pool } = request as { pool: string };
    if (pattern === MemoryPattern.Tier1)
      return { pool, block: `tier1 #${this.calls.length}`, ids: [], seq: this.calls.length } satisfies Tier1Response as never;
    if (pattern === MemoryPattern.Search) return [{ entry: memoryEntry('m1', { pool }), score: 2, effectiveConfidence: 0.9 }] as never;
    if (pattern === MemoryPattern.List) return [memoryEntry('m1', { pool })] as never;
    if (pattern === MemoryPattern.Page) return { data: [{ ...memoryEntry('m1', { pool }), effectiveConfidence: 1 }], nextCursor: 'next' } as never;
    return memoryEntry('m1', { pool }) as never;
  };

  patterns(): string[] {
    return this.calls.map(([pattern]) => pattern);
  }
}

function newRestService() {
  const memory = new RecordingMemory();
  const cache = new GatewayTier1Cache(memory, { ttlMs: 60_000 });
  return { rest: new MemoryRestService(memory, cache), memory, cache };
}

describe('MemoryRestService', () => {
  it('stores what a person writes as actor and source user, and drops the pool’s cached Tier 1', async () => {
    const { rest, memory, cache } = newRestService();
    await cache.get('team', 'r0');
    await rest.create('team', { content: '  uses pnpm  ', category: 'preference' }, {}, 'r1');
    expect(memory.calls[1]).toEqual([
      MemoryPattern.Store,
      { pool: 'team', content: 'uses pnpm', category: 'preference', source: 'user', actor: 'user', requestId: 'r1', causationId: 'r1' },
    ]);
    await cache.get('team', 'r2');
    expect(memory.patterns()).toEqual([MemoryPattern.Tier1, MemoryPattern.Store, MemoryPattern.Tier1]);
  });

  it('measures content as memory stores it (line endings count once), as memory would, so the two never disagree', async () => {
    const { rest, memory } = newRestService();
    const stored = `${'x'.repeat(CONTENT_MAX_CHARS - 2)}\ny`;
    await rest.create('team', { content: stored.replace('\n', '\r\n') }, {}, 'r1');
    expect(memory.calls[0]?.[1]).toMatchObject({ content: stored });
    await expect(rest.create('team', { content: `${stored}z` }, {}, 'r2')).rejects.toMatchObject({
      status: 400,
      message: `content: ${CONTENT_MAX_CHARS + 1} characters; the limit is ${CONTENT_MAX_CHARS}`,
    });
    expect(memory.calls).toHaveLength(1);
  });

  it('asks memory not to store a second copy only when the person asks with ?dedupe=true', async () => {
    const { rest, memory } = newRestService();
    await rest.create('team', { content: 'uses pnpm' }, { dedupe: 'true' }, 'r1');
    await rest.create('team', { content: 'uses pnpm' }, { dedupe: 'false' }, 'r2');
    expect(memory.calls.map(([, request]) => (request as { dedupe?: boolean }).dedupe)).toEqual([true, undefined]);
    await expect(rest.create('team', { content: 'uses pnpm' }, { dedupe: 'yes' }, 'r3')).rejects.toMatchObject({
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
    const { rest, memory } = newRestService();
    for (const [code, status, type] of [
      ['not_found', 404, 'invalid_request_error'],
      ['conflict', 409, 'invalid_request_error'],
      ['unavailable', 503, 'service_unavailable'],
      ['unauthorized', 503, 'service_unavailable'],
      ['internal', 500, 'server_error'],
    ] as const) {
      memory.failWith = code;
      await expect(rest.remove('team', 'm1', false, 'r1')).rejects.toMatchObject({ status, type, code });
    }
  });

  it('searches without recording references when the list has a query, and pages otherwise', async () => {
    const { rest, memory } = newRestService();
    expect(await rest.list('team', { q: 'pnpm', archived: 'true' }, 'r1')).toEqual({
      data: [expect.objectContaining({ id: 'm1', score: 2, effectiveConfidence: 0.9 })],
      nextCursor: null,
    });
    expect(
      await rest.list('team', { archived: 'false', limit: '5', sort: 'confidence', cursor: 'abc', confirmed: 'true', source: 'llm' }, 'r2'),
    ).toEqual({
      data: [expect.objectContaining({ id: 'm1', effectiveConfidence: 1 })],
      nextCursor: 'next',
    });
    expect(memory.calls).toEqual([
      [MemoryPattern.Search, { pool: 'team', query: 'pnpm', includeArchived: true, recordReference: false, requestId: 'r1' }],
      [
        MemoryPattern.Page,
        { pool: 'team', sort: 'confidence', confirmed: true, archived: false, source: 'llm', cursor: 'abc', limit: 5, requestId: 'r2' },
      ],
    ]);
  });

  it('narrows search hits by type, confirmed and source, which the search itself does not filter', async () => {
    const { rest } = newRestService();
    expect((await rest.list('team', { q: 'pnpm', type: 'USER' }, 'r1')).data).toEqual([]);
    expect((await rest.list('team', { q: 'pnpm', type: 'MEMORY', confirmed: 'false', source: 'llm' }, 'r1')).data).toHaveLength(1);
    await expect(rest.list('team', { sort: 'size' }, 'r1')).rejects.toMatchObject({ status: 400 });
  });

  it('lists the pools a key reaches with their Tier 1 size: all known for *, the granted ones otherwise', async () => {
    const { rest, memory } = newRestService();
    memory.call = async (pattern, request) => {
      if (pattern === MemoryPattern.Stats) {
        return {
          lastSeq: 9,
          pools: [{ pool: 'team', active: 2, archived: 1, byCategory: { project: 2 }, lastSeq: 9, lastChangedAt: '2026-05-01T12:00:00.000Z' }],
        } as never;
      }
      const { pool } = request as { pool: string };
      return { pool, block: pool === 'team' ? 'x'.repeat(120) : '', ids: pool === 'team' ? ['a', 'b'] : [], seq: 9 } as never;
    };
    const [team] = (await rest.pools({ all: true }, 'r1')).data as {
      pool: string;
      active: number;
      tier1: { chars: number; tokens: number; ids: number };
    }[];
    expect(team).toMatchObject({ pool: 'team', active: 2, tier1: { chars: 120, ids: 2 } });
    // 120 repeated letters are far fewer o200k tokens than characters, and never none.
    expect(team?.tier1.tokens).toBeGreaterThan(0);
    expect(team?.tier1.tokens).toBeLessThan(120);
    expect((await rest.pools({ all: false, pools: ['solo'] }, 'r1')).data).toEqual([
      { pool: 'solo', active: 0, archived: 0, byCategory: {}, lastSeq: 0, lastChangedAt: null, tier1: { chars: 0, tokens: 0, ids: 0 } },
    ]);
  });

  it('turns one update into the commands it names, in order, and answers the entry as it ends', async () => {
    const { rest, memory } = newRestService();
    await rest.update('team', 'm1', { content: 'uses bun', confirmed: true, archived: false }, 'r1');
    expect(memory.patterns()).toEqual([MemoryPattern.Update, MemoryPattern.Confirm, MemoryPattern.Restore]);
    await rest.update('team', 'm1', {}, 'r2');
    expect(memory.patterns().at(-1)).toBe(MemoryPattern.Get);
  });

  it('purges only when asked to, and deletes with the reason a person gives otherwise', async () => {
    const { rest, memory } = newRestService();
    await rest.remove('team', 'm1', true, 'r1');
    await rest.remove('team', 'm1', false, 'r2');
    expect(memory.calls).toEqual([
      [MemoryPattern.Purge, { pool: 'team', id: 'm1', actor: 'user', requestId: 'r1', causationId: 'r1' }],
      [MemoryPattern.Delete, { pool: 'team', id: 'm1', actor: 'user', requestId: 'r2', causationId: 'r2', reason: 'deleted by a person' }],
    ]);
  });
});
