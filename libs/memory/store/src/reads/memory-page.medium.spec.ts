import { describe, expect, it } from '@jest/globals';
import { MemoryError, type PageRequest, type PageSort } from '@engram/contracts';
import { effectiveConfidence, type MemoryEntry } from '@engram/domain';
import { memoryServicePerTest } from '../testing/memory-service-per-test.js';

const memory = memoryServicePerTest();
const user = { actor: 'user' as const, pool: 'team' };

/** Every entry of a listing, following nextCursor page by page. */
async function all(request: Omit<PageRequest, 'pool' | 'cursor'>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await memory.service.page({ pool: 'team', ...request, ...(cursor ? { cursor } : {}) });
    ids.push(...page.data.map((entry) => entry.id));
    if (page.nextCursor === null) return ids;
    cursor = page.nextCursor;
  }
  throw new Error('listing never ended');
}

describe('paging a pool for a person (memory.page)', () => {
  it('walks every entry exactly once in each sort order, even when many share a sort key', async () => {
    const stored: MemoryEntry[] = [];
    for (let index = 0; index < 23; index++) {
      // Three entries per minute: created_at ties must be broken, not skipped or repeated.
      memory.now = new Date(Date.UTC(2026, 4, 1, 12, Math.floor(index / 3)));
      stored.push(
        await memory.service.store({
          ...user,
          content: `fact number ${index}`,
          category: index % 2 ? 'project' : 'decision',
          confidence: 0.5 + (index % 5) / 10,
        }),
      );
    }
    memory.now = new Date('2026-05-03T12:00:00.000Z');
    await memory.service.refresh({ ...user, ids: [stored[4]!.id, stored[9]!.id] });
    memory.now = new Date('2026-05-20T12:00:00.000Z');

    const newestFirst = [...stored].reverse().map((entry) => entry.id);
    expect(await all({ sort: 'created', limit: 5 })).toEqual(newestFirst);
    const byConfidence = await all({ sort: 'confidence', limit: 4 });
    const expected = [...stored]
      .map((entry) => ({
        id: entry.id,
        value: effectiveConfidence(
          { ...entry, lastReferenced: [4, 9].includes(stored.indexOf(entry)) ? '2026-05-03T12:00:00.000Z' : null },
          memory.now,
        ),
      }))
      .sort((a, b) => b.value - a.value);
    expect(byConfidence).toHaveLength(23);
    expect(new Set(byConfidence).size).toBe(23);
    const values = new Map(expected.map((row) => [row.id, row.value]));
    const ranked = byConfidence.map((id) => values.get(id)!);
    expect([...ranked].sort((a, b) => b - a)).toEqual(ranked);
    const lastUsed = await all({ sort: 'last_used', limit: 3 });
    expect(lastUsed.slice(0, 2).sort()).toEqual([stored[4]!.id, stored[9]!.id].sort());
    expect(new Set(lastUsed).size).toBe(23);
  });

  it('filters by type, category, confirmed, archived and source, and reports effective confidence', async () => {
    memory.now = new Date('2026-05-01T12:00:00.000Z');
    const preference = await memory.service.store({ ...user, content: 'answers in French', category: 'preference' });
    const project = await memory.service.store({ actor: 'llm', pool: 'team', content: 'the API runs on Fastify', category: 'project' });
    const archived = await memory.service.store({ ...user, content: 'used to deploy by hand', category: 'project' });
    await memory.service.archive({ ...user, id: archived.id });
    await memory.service.update({ ...user, id: project.id, confirmed: true });
    memory.now = new Date('2026-05-11T12:00:00.000Z');
    const ids = async (request: Omit<PageRequest, 'pool'>) => (await memory.service.page({ pool: 'team', ...request })).data.map((entry) => entry.id);

    expect(await ids({ type: 'USER' })).toEqual([preference.id]);
    expect(await ids({ category: 'project' })).toEqual([project.id]);
    expect(await ids({ confirmed: true })).toEqual([project.id]);
    expect(await ids({ archived: true })).toEqual([archived.id]);
    expect(await ids({ source: 'llm' })).toEqual([project.id]);
    const [first] = (await memory.service.page({ pool: 'team', type: 'USER' })).data;
    expect(first?.effectiveConfidence).toBeCloseTo(0.95 ** 10, 6);
  });

  it('answers a bad sort, filter or cursor as the caller’s mistake', async () => {
    await memory.service.store({ ...user, content: 'one' });
    await memory.service.store({ ...user, content: 'two' });
    const { nextCursor } = await memory.service.page({ pool: 'team', limit: 1 });
    expect(nextCursor).toEqual(expect.any(String));
    for (const request of [
      { sort: 'name' as PageSort },
      { confirmed: 'yes' as unknown as boolean },
      { cursor: 'garbage' },
      { cursor: nextCursor!, sort: 'confidence' as const },
      { source: 'robot' as 'llm' },
    ]) {
      const refused = memory.service.page({ pool: 'team', ...request });
      await expect(refused).rejects.toBeInstanceOf(MemoryError);
      await expect(refused).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });
});
