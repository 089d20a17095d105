import { describe, expect, it } from '@jest/globals';
import { MemoryPattern, type Tier1Response } from '@engram/contracts';
import { GatewayTier1Cache } from '@engram/gateway-engine';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess, observed } from '../../support/memory-in-process.js';

/** The gateway's copy of each pool's Tier 1 block, in front of the real memory service. */

const under = memoryServicePerTest();
const live = memoryInProcess(() => under.service);
const store = (content: string) => live.call(MemoryPattern.Store, { pool: 'p', actor: 'user', content, category: 'preference' });

function newCache(options: { ttlMs: number; now: () => number }) {
  const memory = observed(live);
  return { memory, cache: new GatewayTier1Cache(memory, options) };
}

describe('GatewayTier1Cache', () => {
  it('asks memory once for concurrent misses and serves later requests from its copy', async () => {
    await store('prefers fish shell');
    const { memory, cache } = newCache({ ttlMs: 1_000, now: () => 0 });
    const first = cache.get('p', 'r1');
    const second = cache.get('p', 'r2');
    expect(memory.calls).toHaveLength(1);
    expect((await first).block).toContain('prefers fish shell');
    expect(await second).toEqual(await first);
    expect((cache.get('p', 'r3') as Tier1Response).block).toContain('prefers fish shell');
    expect(memory.calls).toHaveLength(1);
  });

  it('drops a pool on a newer change announcement, not on an older one', async () => {
    await store('prefers fish shell');
    const { memory, cache } = newCache({ ttlMs: 60_000, now: () => 0 });
    const first = await cache.get('p', 'r');
    cache.changed({ pool: 'p', seq: first.seq });
    expect((cache.get('p', 'r') as Tier1Response).block).toBe(first.block);
    expect(memory.calls).toHaveLength(1);

    const newer = await store('prefers tabs');
    cache.changed({ pool: 'p', seq: first.seq + 1 });
    const second = await cache.get('p', 'r');
    expect(memory.calls).toHaveLength(2);
    expect(second.block).toContain(newer.content);
  });

  it('asks again once its copy is older than the TTL', async () => {
    let now = 0;
    const { memory, cache } = newCache({ ttlMs: 100, now: () => now });
    await cache.get('p', 'r');
    now = 50;
    await cache.get('p', 'r');
    expect(memory.calls).toHaveLength(1);
    now = 150;
    await cache.get('p', 'r');
    expect(memory.calls).toHaveLength(2);
  });

  it('answers a fetch that was under way when the pool was evicted, but does not keep its block', async () => {
    await store('prefers fish shell');
    const { memory, cache } = newCache({ ttlMs: 60_000, now: () => 0 });
    const loading = cache.get('p', 'r');
    cache.evict('p');
    expect((await loading).block).toContain('prefers fish shell');
    await cache.get('p', 'r');
    expect(memory.calls).toHaveLength(2);
  });
});
