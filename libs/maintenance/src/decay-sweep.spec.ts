import { describe, expect, it } from '@jest/globals';
import { decaySweep } from './decay-sweep.js';
import { entry, FakeMemory } from './fake-memory.fixture.js';

const context = { jobId: 'repeat-decay-1', enqueuedAt: new Date('2026-12-01T00:00:00Z') };
const clock = { now: () => new Date('2026-12-01T00:00:00Z') };
const referenced = '2026-11-01T00:00:00.000Z';

function pool(): FakeMemory {
  return new FakeMemory([
    // 30 days unused: 0.95^30 = 0.215 -> archived.
    entry({ id: 'stale', category: 'project', lastReferenced: referenced }),
    // Gotchas fade slower: 0.98^30 = 0.545 -> kept.
    entry({ id: 'gotcha', category: 'gotcha', lastReferenced: referenced }),
    // Used recently (on Dec 20: a clock behind that counts zero days).
    entry({ id: 'fresh', category: 'project', lastReferenced: '2026-12-20T00:00:00.000Z' }),
    entry({ id: 'other-pool', pool: 'solo', lastReferenced: referenced }),
  ]);
}

describe('decaySweep', () => {
  it('archives what fell below 0.3, as worker:decay, in every pool', async () => {
    const memory = pool();
    const outcome = await decaySweep(memory, clock, {}, context);
    expect([...outcome.archived].sort()).toEqual(['other-pool', 'stale']);
    expect(
      memory
        .active()
        .map((item) => item.id)
        .sort(),
    ).toEqual(['fresh', 'gotcha']);
    expect(memory.log.every((event) => event.type === 'memory.archived' && event.actor === 'worker:decay')).toBe(true);
    expect(memory.log[0]?.causationId).toBe('repeat-decay-1');
  });

  it('keeps archived entries in the store (restorable), not deleted', async () => {
    const memory = pool();
    await decaySweep(memory, clock, { pool: 'team' }, context);
    expect(memory.entries.get('stale')?.isArchived).toBe(true);
  });

  it('evaluates at an injected time instead of the clock', async () => {
    const memory = pool();
    const before = await decaySweep(memory, clock, { pool: 'team', asOf: '2026-11-10T00:00:00.000Z' }, context);
    expect(before.archived).toEqual([]);
    // 0.98^60 = 0.298: a gotcha untouched for 60 days goes too.
    const later = await decaySweep(memory, clock, { pool: 'team', asOf: '2026-12-31T00:00:00.000Z' }, context);
    expect([...later.archived].sort()).toEqual(['gotcha', 'stale']);
  });

  it('is idempotent: a second run archives nothing more', async () => {
    const memory = pool();
    await decaySweep(memory, clock, {}, context);
    const again = await decaySweep(memory, clock, {}, context);
    expect(again.archived).toEqual([]);
    expect(memory.log).toHaveLength(2);
  });

  it('reaches every entry of a pool larger than one page', async () => {
    const many = Array.from({ length: 2_500 }, (_, index) => entry({ id: `old-${index}`, category: 'project', lastReferenced: referenced }));
    const memory = new FakeMemory([...many, entry({ id: 'fresh', category: 'project', lastReferenced: '2026-12-20T00:00:00.000Z' })]);
    const outcome = await decaySweep(memory, clock, { pool: 'team' }, context);
    expect(outcome.examined).toBe(2_501);
    expect(outcome.archived).toHaveLength(2_500);
    expect(memory.active().map((item) => item.id)).toEqual(['fresh']);
  });

  it('refuses a time it cannot read', async () => {
    await expect(decaySweep(pool(), clock, { asOf: 'yesterday' }, context)).rejects.toThrow(/asOf/);
  });
});
