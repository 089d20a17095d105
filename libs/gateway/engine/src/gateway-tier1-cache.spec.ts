import { MemoryPattern, type Tier1Response } from '@engram/contracts';
import { describe, expect, it } from '@jest/globals';
import type { MemoryPort } from './ports.js';
import { GatewayTier1Cache } from './gateway-tier1-cache.js';

/** A memory double whose Tier 1 answers are released by hand. */
function memoryDouble() {
  const pending: { pool: string; resolve: (value: Tier1Response) => void }[] = [];
  let seq = 1;
  const port: MemoryPort = {
    call: ((pattern: string, request: { pool: string }) => {
      expect(pattern).toBe(MemoryPattern.Tier1);
      return new Promise<Tier1Response>((resolve) => pending.push({ pool: request.pool, resolve }));
    }) as MemoryPort['call'],
  };
  const answer = (block = `block ${seq}`): void => {
    const next = pending.shift();
    if (!next) throw new Error('no pending fetch');
    next.resolve({ pool: next.pool, block, ids: [], seq: seq++ });
  };
  return { port, pending, answer };
}

describe('GatewayTier1Cache', () => {
  it('fetches once for concurrent misses and serves later requests from memory', async () => {
    const memory = memoryDouble();
    const cache = new GatewayTier1Cache(memory.port, { ttlMs: 1_000, now: () => 0 });
    const first = cache.get('p', 'r1');
    const second = cache.get('p', 'r2');
    expect(memory.pending).toHaveLength(1);
    memory.answer('A');
    expect((await first).block).toBe('A');
    expect((await second).block).toBe('A');
    expect((cache.get('p', 'r3') as Tier1Response).block).toBe('A');
  });

  it('drops a pool on a newer change announcement, not on an older one', async () => {
    const memory = memoryDouble();
    const cache = new GatewayTier1Cache(memory.port, { ttlMs: 60_000, now: () => 0 });
    const loading = cache.get('p', 'r');
    memory.answer('A'); // seq 1
    await loading;
    cache.changed({ pool: 'p', seq: 1 });
    expect(memory.pending).toHaveLength(0);
    expect((cache.get('p', 'r') as Tier1Response).block).toBe('A');
    cache.changed({ pool: 'p', seq: 2 });
    void cache.get('p', 'r');
    expect(memory.pending).toHaveLength(1);
  });

  it('expires after the TTL', async () => {
    const memory = memoryDouble();
    let now = 0;
    const cache = new GatewayTier1Cache(memory.port, { ttlMs: 100, now: () => now });
    const loading = cache.get('p', 'r');
    memory.answer();
    await loading;
    now = 50;
    void cache.get('p', 'r');
    expect(memory.pending).toHaveLength(0);
    now = 150;
    void cache.get('p', 'r');
    expect(memory.pending).toHaveLength(1);
  });

  it('does not keep a block fetched while the pool was evicted', async () => {
    const memory = memoryDouble();
    const cache = new GatewayTier1Cache(memory.port, { ttlMs: 60_000, now: () => 0 });
    const loading = cache.get('p', 'r');
    cache.evict('p');
    memory.answer('stale');
    expect((await loading).block).toBe('stale');
    void cache.get('p', 'r');
    expect(memory.pending).toHaveLength(1);
  });
});
