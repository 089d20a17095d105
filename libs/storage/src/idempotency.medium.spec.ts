import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { MemoryService } from './memory-service.js';
import { openMemoryService } from './open-memory-service.js';
import { replayDataDir } from './rebuild.js';
import { silentLogger, tempDataDir } from './testing/temp-data-dir.js';

let dir: ReturnType<typeof tempDataDir>;
let service: MemoryService;
const open = () => openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger: silentLogger() });
const team = { actor: 'user' as const, pool: 'team' };

beforeEach(async () => {
  dir = tempDataDir();
  service = await open();
});
afterEach(async () => {
  await service.close();
  dir.remove();
});

const storedEvents = async (pool: string) => (await service.events({ pool })).data.filter((event) => event.type === 'memory.stored');

describe('stores with an idempotency key', () => {
  it('store once however often a key is retried, also while the first attempt is still in flight', async () => {
    const request = { ...team, content: 'deploys on Fridays', idempotencyKey: 'c0ffee-1' };
    const [first, second] = await Promise.all([service.store(request), service.store(request)]);
    const third = await service.store(request);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(await storedEvents('team')).toHaveLength(1);
    expect(await service.list({ pool: 'team' })).toEqual([first]);
    const other = await service.store({ ...team, content: 'deploys on Mondays', idempotencyKey: 'c0ffee-2' });
    expect(other.id).not.toBe(first.id);
  });

  it('remembers the key in the log: a retry after a restart and a replay still returns the first entry', async () => {
    const request = { ...team, content: 'uses zsh', idempotencyKey: '7a1e6a0e-2f3c-4b5d-8e9f-0a1b2c3d4e5f' };
    const first = await service.store(request);
    await service.close();
    await replayDataDir(dir.path, silentLogger());
    service = await open();
    expect(await service.store(request)).toEqual(first);
    expect(await storedEvents('team')).toHaveLength(1);
  });

  it('keeps keys per pool, and refuses a key that is not printable ASCII', async () => {
    const inTeam = await service.store({ ...team, content: 'same words', idempotencyKey: 'k-1' });
    const inOther = await service.store({ actor: 'user', pool: 'other', content: 'same words', idempotencyKey: 'k-1' });
    expect(inOther.id).not.toBe(inTeam.id);
    expect(inOther.pool).toBe('other');
    for (const idempotencyKey of ['', 'has space', 'x'.repeat(256), 'ünïcode', 42]) {
      await expect(service.store({ ...team, content: 'x', idempotencyKey: idempotencyKey as string })).rejects.toThrow(
        expect.objectContaining({ name: 'MemoryError', code: 'invalid_request' }),
      );
    }
  });
});
