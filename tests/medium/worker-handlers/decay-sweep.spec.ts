import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { decaySweep } from '@engram/worker-handlers';
import { memoryServicePerTest, TEST_START } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

const DAY = 86_400_000;
const daysLater = (days: number) => new Date(Date.parse(TEST_START) + days * DAY);
const context = { jobId: 'repeat-decay-1', enqueuedAt: new Date(TEST_START) };
/** The worker's clock: 30 days after the entries were stored. */
const clock = { now: () => daysLater(30) };

describe('the worker’s decay sweep against the real memory service', () => {
  const under = memoryServicePerTest();
  const memory = memoryInProcess(() => under.service);
  const store = (content: string, category: 'project' | 'gotcha', pool = 'team') =>
    memory.call(MemoryPattern.Store, { pool, actor: 'user', content, category });
  const active = async (pool = 'team') =>
    (await memory.call(MemoryPattern.List, { pool, archived: false, limit: 1000 })).map((entry) => entry.content).sort();

  /** 30 days unused: 0.95^30 = 0.215 archives a plain fact; a gotcha (0.98^30 = 0.545) stays; one used on day 25 stays. */
  async function pools() {
    const stale = await store('stale: the API runs on Fastify', 'project');
    const gotcha = await store('gotcha: CI flakes on Mondays', 'gotcha');
    const fresh = await store('fresh: deploys go through Actions', 'project');
    const solo = await store('stale too, in another pool', 'project', 'solo');
    under.now = daysLater(25);
    await memory.call(MemoryPattern.Refresh, { pool: 'team', ids: [fresh.id], actor: 'user' });
    return { stale, gotcha, fresh, solo };
  }

  it('archives what fell below 0.3 in every pool, as worker:decay caused by the job, restorably', async () => {
    const { stale, solo } = await pools();
    const outcome = await decaySweep(memory, clock, {}, context);
    expect(outcome).toEqual({ asOf: daysLater(30).toISOString(), pools: 2, examined: 4, archived: expect.arrayContaining([stale.id, solo.id]) });
    expect(outcome.archived).toHaveLength(2);
    expect(await active()).toEqual(['fresh: deploys go through Actions', 'gotcha: CI flakes on Mondays']);
    expect(await active('solo')).toEqual([]);
    const archivedEvents = (await memory.call(MemoryPattern.EventsAfter, { after: 0 })).filter((event) => event.type === 'memory.archived');
    expect(archivedEvents).toHaveLength(2);
    expect(archivedEvents.every((event) => event.actor === 'worker:decay' && event.causationId === 'repeat-decay-1')).toBe(true);
    expect(await memory.call(MemoryPattern.Restore, { pool: 'team', id: stale.id, actor: 'user' })).toMatchObject({ isArchived: false });
  });

  it('sweeps one pool when the job names it', async () => {
    const { solo } = await pools();
    const outcome = await decaySweep(memory, clock, { pool: 'team' }, context);
    expect(outcome).toMatchObject({ pools: 1, examined: 3 });
    expect((await memory.call(MemoryPattern.Get, { pool: 'solo', id: solo.id })).isArchived).toBe(false);
  });

  it('evaluates at an injected time instead of the clock', async () => {
    const { stale, gotcha, fresh } = await pools();
    expect((await decaySweep(memory, clock, { pool: 'team', asOf: daysLater(10).toISOString() }, context)).archived).toEqual([]);
    // 0.98^60 = 0.298: a gotcha untouched for 60 days goes too, and the fact last used on day 25 (0.95^35).
    const later = await decaySweep(memory, clock, { pool: 'team', asOf: daysLater(60).toISOString() }, context);
    expect([...later.archived].sort()).toEqual([stale.id, gotcha.id, fresh.id].sort());
  });

  it('is idempotent: a second run archives nothing more and writes nothing', async () => {
    await pools();
    await decaySweep(memory, clock, {}, context);
    const { lastSeq } = await memory.call(MemoryPattern.Stats, {});
    expect(await decaySweep(memory, clock, {}, context)).toMatchObject({ examined: 2, archived: [] });
    expect((await memory.call(MemoryPattern.Stats, {})).lastSeq).toBe(lastSeq);
  });

  it('reaches every entry of a pool larger than one page of a listing', async () => {
    await Promise.all(Array.from({ length: 2_500 }, (_, i) => store(`old fact number ${i}`, 'project')));
    under.now = daysLater(29);
    await store('fresh: stored yesterday', 'project');
    const outcome = await decaySweep(memory, clock, { pool: 'team' }, context);
    expect(outcome.examined).toBe(2_501);
    expect(outcome.archived).toHaveLength(2_500);
    expect(await active()).toEqual(['fresh: stored yesterday']);
  });

  it('refuses a time it cannot read', async () => {
    await expect(decaySweep(memory, clock, { asOf: 'yesterday' }, context)).rejects.toThrow(/asOf/);
  });
});
