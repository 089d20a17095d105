import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { StoreRequest } from '@engram/contracts';
import { memoryServicePerTest } from '../testing/memory-service-per-test.js';

const memory = memoryServicePerTest();
const base = { actor: 'user' as const, pool: 'team' };

const store = (content: string, extra: Partial<StoreRequest> = {}) => memory.service.store({ ...base, content, ...extra });
const found = async (query: string, extra: { limit?: number; category?: 'project'; includeArchived?: boolean; pool?: string } = {}) =>
  (await memory.service.search({ pool: 'team', query, ...extra })).map((hit) => hit.entry.content);

describe('lexical search ranking', () => {
  it('finds an old entry that is the only true match among many newer partial matches', async () => {
    memory.now = new Date('2025-01-10T09:00:00.000Z');
    await store('Caroline went to the LGBTQ support group on Tuesday');
    memory.now = new Date('2026-05-01T12:00:00.000Z');
    await Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        store(i % 2 === 0 ? `Group chat number ${i} about the weekend` : `Thanks for the support, note ${i}`, { confidence: 1 }),
      ),
    );
    const hits = await found('When did Caroline go to the LGBTQ support group?', { limit: 5 });
    expect(hits[0]).toBe('Caroline went to the LGBTQ support group on Tuesday');
  });

  it('does not let a high confidence bury a better match: confidence only breaks ties', async () => {
    await store('staging database: the staging copy of postgres', { confidence: 0.1 });
    await store('staging database: the nightly backups of postgres', { confidence: 1 });
    memory.now = new Date('2026-05-01T15:00:00.000Z');
    await store('prefers tabs', { confidence: 1 });
    await store('prefers tabs', { confidence: 0.3 });
    expect((await found('staging database'))[0]).toBe('staging database: the staging copy of postgres');
    const tabs = await memory.service.search({ pool: 'team', query: 'tabs' });
    expect(tabs.map((hit) => hit.entry.confidence)).toEqual([1, 0.3]);
  });

  it('ignores stopwords when the query has other words, and searches by them when it has nothing else', async () => {
    await store('saw The Who live in 1989');
    await store('the tests run in CI for every branch');
    await store('what does it do when the tests do what they should not do');
    await store('deploy runs from the ops folder');
    expect(await found('what does the deploy do?', { limit: 1 })).toEqual(['deploy runs from the ops folder']);
    expect(await found('The Who', { limit: 1 })).toEqual(['saw The Who live in 1989']);
  });

  it('excludes archived entries unless asked for them', async () => {
    const archived = await store('redis runs on port 6380 in staging');
    await memory.service.delete({ ...base, id: archived.id });
    await store('redis is the job queue');
    expect(await found('redis staging port')).toEqual(['redis is the job queue']);
    expect(await found('redis staging port', { includeArchived: true })).toContain('redis runs on port 6380 in staging');
  });

  it('keeps to the category and the pool asked for', async () => {
    await store('the gateway proxies to OpenAI', { category: 'project' });
    await store('the gateway host is called atlas', { category: 'environment' });
    await store('the gateway of another team', { pool: 'other' });
    expect(await found('gateway', { category: 'project' })).toEqual(['the gateway proxies to OpenAI']);
    expect(await found('gateway')).toHaveLength(2);
  });

  it('ranks a match written just after a strong match above an equal match written hours apart', async () => {
    memory.now = new Date('2026-05-01T06:00:00.000Z');
    await store('James: a parrot and a canary.');
    memory.now = new Date('2026-05-01T12:00:00.000Z');
    await store('Which breeds are the dogs of James?');
    await store('James: a beagle and a poodle.');
    await store('the cat sleeps all day');
    const hits = await found("breeds of James's dogs");
    expect(hits).toEqual(['Which breeds are the dogs of James?', 'James: a beagle and a poodle.', 'James: a parrot and a canary.']);
  });

  it('answers any user text without an error', async () => {
    await store('plain entry about docker');
    await store('ünïcode 日本語 entry');
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (query) => {
        const hits = await memory.service.search({ pool: 'team', query, limit: 10 });
        expect(hits.length).toBeLessThanOrEqual(10);
        for (const hit of hits) expect(hit.entry.pool).toBe('team');
      }),
      { numRuns: 300 },
    );
  });
});
