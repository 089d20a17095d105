import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '@engram/testing';
import { replayDataDir } from '../data-dir/rebuild.js';
import { memoryServicePerTest } from '../testing/memory-service-per-test.js';

const memory = memoryServicePerTest();
const team = { actor: 'user' as const, pool: 'team' };

const storedEvents = async (pool: string) => (await memory.service.events({ pool })).data.filter((event) => event.type === 'memory.stored');

describe('stores with an idempotency key', () => {
  it('store once however often a key is retried, also while the first attempt is still in flight', async () => {
    const request = { ...team, content: 'deploys on Fridays', idempotencyKey: 'c0ffee-1' };
    const [first, second] = await Promise.all([memory.service.store(request), memory.service.store(request)]);
    const third = await memory.service.store(request);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(await storedEvents('team')).toHaveLength(1);
    expect(await memory.service.list({ pool: 'team' })).toEqual([first]);
    const other = await memory.service.store({ ...team, content: 'deploys on Mondays', idempotencyKey: 'c0ffee-2' });
    expect(other.id).not.toBe(first.id);
  });

  it('refuses a bound key reused with another request, also after the entry was edited and after a restart; an unbound key answers the first entry', async () => {
    const request = {
      ...team,
      content: 'deploys on Fridays',
      category: 'project' as const,
      idempotencyKey: 'rest-1',
      idempotencyKeyBindsRequest: true,
    };
    const [first, inFlightRetry] = await Promise.all([memory.service.store(request), memory.service.store(request)]);
    expect(inFlightRetry).toEqual(first);
    const reused = (change: object) => memory.service.store({ ...request, ...change });
    await expect(
      Promise.all([memory.service.store({ ...request, idempotencyKey: 'rest-2' }), reused({ idempotencyKey: 'rest-2', content: 'other' })]),
    ).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
    for (const change of [{ content: 'deploys on Mondays' }, { category: 'decision' as const }, { type: 'USER' as const }]) {
      await expect(reused(change)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    }
    // The first request is what counts, not the entry as it is now.
    await memory.service.update({ ...team, id: first.id, content: 'deploys on Thursdays' });
    expect((await memory.service.store(request)).id).toBe(first.id);
    await memory.reopen();
    await expect(reused({ content: 'deploys on Mondays' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    // A model's replayed tool call (unbound key) is the same call: the first entry, whatever it sends.
    expect((await memory.service.store({ ...request, content: 'anything', idempotencyKeyBindsRequest: false })).id).toBe(first.id);
    expect(await storedEvents('team')).toHaveLength(2);
  });

  it('remembers the key in the log: a retry after a restart and a replay still returns the first entry', async () => {
    const request = { ...team, content: 'uses zsh', idempotencyKey: '7a1e6a0e-2f3c-4b5d-8e9f-0a1b2c3d4e5f' };
    const first = await memory.service.store(request);
    await memory.service.close();
    await replayDataDir(memory.dataDir, silentLogger());
    await memory.reopen();
    expect(await memory.service.store(request)).toEqual(first);
    expect(await storedEvents('team')).toHaveLength(1);
  });

  it('keeps keys per pool, and refuses a key that is not printable ASCII', async () => {
    const inTeam = await memory.service.store({ ...team, content: 'same words', idempotencyKey: 'k-1' });
    const inOther = await memory.service.store({ actor: 'user', pool: 'other', content: 'same words', idempotencyKey: 'k-1' });
    expect(inOther.id).not.toBe(inTeam.id);
    expect(inOther.pool).toBe('other');
    for (const idempotencyKey of ['', 'has space', 'x'.repeat(256), 'ünïcode', 42]) {
      await expect(memory.service.store({ ...team, content: 'x', idempotencyKey: idempotencyKey as string })).rejects.toThrow(
        expect.objectContaining({ name: 'MemoryError', code: 'invalid_request' }),
      );
    }
  });
});
