import { describe, expect, it } from '@jest/globals';
import { ReplicaSet } from './memory-replica-set.js';

const replicas = ['memory-1:4001', 'memory-2:4001', 'memory-3:4001'].map((address) => ({ address }));
const pools = Array.from({ length: 300 }, (_, i) => `pool-${i}`);

describe('ReplicaSet: which replica a call goes to', () => {
  it('gives each pool one replica, the same in every process, and spreads the pools over all of them', () => {
    const one = new ReplicaSet(replicas);
    const other = new ReplicaSet([...replicas].reverse().map(({ address }) => ({ address })));
    const first = (set: ReplicaSet<{ address: string }>, pool: string): string => set.order(pool)[0]!.address;
    for (const pool of pools) expect(first(other, pool)).toBe(first(one, pool));
    const counts = new Map<string, number>();
    for (const pool of pools) counts.set(first(one, pool), (counts.get(first(one, pool)) ?? 0) + 1);
    for (const { address } of replicas) expect(counts.get(address)).toBeGreaterThan(60);
  });

  it("moves a down replica's pools to their next replica, spread over the others, and leaves the other pools where they were", () => {
    const set = new ReplicaSet(replicas);
    const before = new Map(pools.map((pool) => [pool, set.order(pool).map(({ address }) => address)]));
    expect(set.failed(replicas[0]!, 'connect ECONNREFUSED')).toBe(true);
    const moved = new Map<string, number>();
    for (const pool of pools) {
      const was = before.get(pool)!;
      const now = set.order(pool).map(({ address }) => address);
      expect(now).toEqual([...was.filter((address) => address !== 'memory-1:4001'), 'memory-1:4001']);
      if (was[0] === 'memory-1:4001') moved.set(now[0]!, (moved.get(now[0]!) ?? 0) + 1);
    }
    expect(moved.get('memory-2:4001')).toBeGreaterThan(20);
    expect(moved.get('memory-3:4001')).toBeGreaterThan(20);

    expect(set.answered(replicas[0]!)).toBe(true);
    for (const pool of pools) expect(set.order(pool).map(({ address }) => address)).toEqual(before.get(pool));
  });

  it('still tries every replica, down ones last, when all are down', () => {
    const set = new ReplicaSet(replicas);
    for (const replica of replicas) set.failed(replica, 'refused');
    expect(set.order('work')).toHaveLength(3);
  });

  it('says since when each replica is in its state and why it is down, and tells a change from a repeat', () => {
    let now = Date.parse('2026-12-04T11:00:00Z');
    const set = new ReplicaSet(replicas.slice(0, 2), () => now);
    expect(set.health()).toEqual([
      { address: 'memory-1:4001', state: 'unknown', since: null, error: null },
      { address: 'memory-2:4001', state: 'unknown', since: null, error: null },
    ]);
    expect(set.answered(replicas[1]!)).toBe(false);
    now += 1_000;
    expect(set.failed(replicas[0]!, 'connect ECONNREFUSED 10.0.0.1:4001')).toBe(true);
    now += 1_000;
    expect(set.failed(replicas[0]!, 'connect ECONNREFUSED 10.0.0.1:4001 again')).toBe(false);
    expect(set.health()).toEqual([
      { address: 'memory-1:4001', state: 'down', since: '2026-12-04T11:00:01.000Z', error: 'connect ECONNREFUSED 10.0.0.1:4001 again' },
      { address: 'memory-2:4001', state: 'up', since: '2026-12-04T11:00:00.000Z', error: null },
    ]);
    expect(set.down()).toEqual([replicas[0]]);
  });
});
