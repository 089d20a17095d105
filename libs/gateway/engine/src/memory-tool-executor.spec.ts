import { describe, expect, it } from '@jest/globals';
import { MemoryError, MemoryPattern } from '@engram/contracts';
import { MemoryToolExecutor } from './memory-tool-executor.js';
import type { MemoryPort } from './ports.js';

function recordingMemory() {
  const stores: Record<string, unknown>[] = [];
  const memory = {
    call: (pattern: string, request: Record<string, unknown>) => {
      if (pattern === MemoryPattern.Store) stores.push(request);
      return Promise.resolve({ id: 'm1', content: String(request['content']), category: null });
    },
  } as unknown as MemoryPort;
  return { memory, stores };
}

describe('MemoryToolExecutor store_memory', () => {
  it('gives the store an idempotency key from the tool call id and content, so the same call run twice stores once', async () => {
    const { memory, stores } = recordingMemory();
    const tools = new MemoryToolExecutor(memory);
    const context = { pool: 'p', requestId: 'r1' };
    const call = (id: string, content: string) => tools.run({ id, name: 'store_memory', arguments: JSON.stringify({ content }) }, context);
    await call('call_0', 'uses zsh');
    await call('call_0', 'uses zsh');
    await call('call_1', 'uses zsh');
    await call('call_0', 'uses fish');
    const keys = stores.map((store) => store['idempotencyKey']);
    expect(keys[0]).toEqual(expect.stringMatching(/^[\x21-\x7e]{1,255}$/));
    expect(keys[1]).toBe(keys[0]);
    expect(new Set([keys[0], keys[2], keys[3]]).size).toBe(3);
  });
});

describe('MemoryToolExecutor store_memory of a purged text', () => {
  it('tells the model it was not stored because a person removed it, as a readable tool error', async () => {
    const memory = {
      call: () => Promise.reject(new MemoryError('gone', 'this text was purged from the pool; it is not stored again from a conversation')),
    } as unknown as MemoryPort;
    const result = await new MemoryToolExecutor(memory).run(
      { id: 'c1', name: 'store_memory', arguments: JSON.stringify({ content: 'the user secret is W' }) },
      { pool: 'p', requestId: 'r1' },
    );
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/^Not stored: this text was purged .*do not store it again\.$/) });
  });
});

describe('MemoryToolExecutor store_memory of a known fact', () => {
  it('asks the store to dedupe and says the fact was already known, citing the existing entry', async () => {
    const stores: Record<string, unknown>[] = [];
    const memory = {
      call: (_pattern: string, request: Record<string, unknown>) => {
        stores.push(request);
        return Promise.resolve({ id: 'old1', content: 'Uses zsh', category: 'environment', existing: true });
      },
    } as unknown as MemoryPort;
    const result = await new MemoryToolExecutor(memory).run(
      { id: 'c1', name: 'store_memory', arguments: JSON.stringify({ content: 'uses ZSH.' }) },
      { pool: 'p', requestId: 'r' },
    );
    expect(stores[0]).toMatchObject({ dedupe: true, content: 'uses ZSH.' });
    expect(result).toMatchObject({ content: 'Already known [id:old1] Uses zsh', isError: false });
  });
});

describe('MemoryToolExecutor memory_search', () => {
  const now = new Date('2026-05-10T12:00:00.000Z');
  const hit = (id: string, content: string, category: string | null, createdAt: string, effectiveConfidence: number) => ({
    entry: { id, content, category, createdAt },
    score: 1,
    effectiveConfidence,
  });
  function searching(hits: ReturnType<typeof hit>[]) {
    const searches: Record<string, unknown>[] = [];
    const memory = {
      call: (_pattern: string, request: Record<string, unknown>) => {
        searches.push(request);
        return Promise.resolve(hits);
      },
    } as unknown as MemoryPort;
    const tools = new MemoryToolExecutor(
      memory,
      () => undefined,
      () => now,
    );
    const search = async (args: object, tier1Ids?: string[]) =>
      (
        await tools.run(
          { id: 's', name: 'memory_search', arguments: JSON.stringify(args) },
          { pool: 'p', requestId: 'r', ...(tier1Ids ? { tier1Ids } : {}) },
        )
      ).content;
    return { search, searches };
  }

  it('answers one short line per hit, best first, with category, age and effective confidence', async () => {
    const { search } = searching([
      hit('a1', 'Deploys go out on Fridays', 'project', '2026-05-07T09:00:00.000Z', 0.83),
      hit('b2', 'Staging runs Debian 12', null, '2026-05-10T08:00:00.000Z', 1),
      hit('c3', 'The CI runs on a Raspberry Pi', 'environment', '2026-02-01T00:00:00.000Z', 0.51),
    ]);
    expect(await search({ query: 'deploys' })).toBe(
      'Found 3:\n[id:a1] Deploys go out on Fridays (project, 3d ago, conf 0.8)\n[id:b2] Staging runs Debian 12 (today, conf 1.0)\n[id:c3] The CI runs on a Raspberry Pi (environment, 3mo ago, conf 0.5)',
    );
  });

  it('names entries of the Tier 1 block the model was given after the hits instead of repeating them, asking for enough hits to still fill the limit', async () => {
    const { search, searches } = searching([
      hit('t1', 'Prefers tabs', 'preference', '2026-05-01T00:00:00.000Z', 1),
      hit('a1', 'Deploys go out on Fridays', 'project', '2026-05-07T09:00:00.000Z', 0.8),
    ]);
    expect(await search({ query: 'tabs deploys', limit: 1 }, ['t1', 't2'])).toBe(
      'Found 1:\n[id:a1] Deploys go out on Fridays (project, 3d ago, conf 0.8)\nAlso in your memory block:\n[id:t1] Prefers tabs',
    );
    expect(searches[0]).toMatchObject({ query: 'tabs deploys', limit: 3, recordReference: true });
  });

  it('names the matching ids when every hit is already in the Tier 1 block, so the model can cite them, and says when nothing matches', async () => {
    expect(await searching([hit('t1', 'Prefers tabs', 'preference', '2026-05-01T00:00:00.000Z', 1)]).search({ query: 'tabs' }, ['t1'])).toBe(
      'Only memories already in your memory block match "tabs":\n[id:t1] Prefers tabs',
    );
    expect(await searching([]).search({ query: 'tabs' }, ['t1'])).toBe('No memories match "tabs".');
  });
});
