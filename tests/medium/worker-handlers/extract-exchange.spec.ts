import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { extractedMemoryId, extractExchange } from '@engram/worker-handlers';
import { memoryServicePerTest, TEST_START } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

/** The job was enqueued an hour before the memory service's clock. */
const context = { jobId: 'extract.req-1', enqueuedAt: new Date(Date.parse(TEST_START) - 3_600_000) };

function job(suggestions: string[], user = 'How do I run the tests?') {
  return { pool: 'team', suggestions, exchange: { user, assistant: 'Run npm test.' }, requestId: 'req-1', exchangeId: 'exchange-1' };
}

describe('the worker’s extraction job against the real memory service', () => {
  const under = memoryServicePerTest();
  const memory = memoryInProcess(() => under.service);
  const active = async (pool = 'team') => (await memory.call(MemoryPattern.List, { pool, archived: false, limit: 1000 })).reverse();
  const store = (content: string) => memory.call(MemoryPattern.Store, { pool: 'team', actor: 'llm', content });

  it('stores new suggestions, categorized, as the worker, caused by the request', async () => {
    const outcome = await extractExchange(memory, job(['User prefers concise answers', 'The CI build fails when the cache is stale']), context);
    expect(outcome.stored).toHaveLength(2);
    expect((await active()).map((item) => [item.content, item.type, item.category, item.source]).sort()).toEqual([
      ['The CI build fails when the cache is stale', 'MEMORY', 'gotcha', 'marker'],
      ['User prefers concise answers', 'USER', 'preference', 'marker'],
    ]);
    const events = await memory.call(MemoryPattern.EventsAfter, { after: 0 });
    expect(events.every((event) => event.actor === 'worker:extract' && event.causationId === 'req-1')).toBe(true);
  });

  it('refreshes an entry that says the same thing instead of adding a copy', async () => {
    const known = await store('The user prefers concise answers.');
    const outcome = await extractExchange(memory, job(['User prefers concise answers']), context);
    expect(outcome).toEqual({ stored: [], refreshed: [known.id], unchanged: 0, purged: 0 });
    expect(await active()).toEqual([expect.objectContaining({ id: known.id, referenceCount: 1, lastReferenced: TEST_START })]);
  });

  it('finds the entry that says the same thing however many entries the pool holds', async () => {
    // The oldest entry, past the first page of a listing (newest first).
    under.now = new Date(Date.parse(TEST_START) - 86_400_000);
    const known = await store('The user prefers concise answers.');
    under.now = new Date(TEST_START);
    await Promise.all(Array.from({ length: 1_200 }, (_, i) => store(`Service ${i} listens on port ${4_000 + i}`)));
    const outcome = await extractExchange(memory, job(['User prefers concise answers']), context);
    expect(outcome).toEqual({ stored: [], refreshed: [known.id], unchanged: 0, purged: 0 });
    expect((await memory.call(MemoryPattern.Stats, {})).pools).toEqual([expect.objectContaining({ pool: 'team', active: 1_201 })]);
  });

  it('leaves the same state when delivered twice', async () => {
    await store('The user prefers concise answers.');
    const data = job(['User prefers concise answers', 'Uses pnpm workspaces in the monorepo']);
    await extractExchange(memory, data, context);
    const snapshot = await active();
    const { lastSeq } = await memory.call(MemoryPattern.Stats, {});
    expect(await extractExchange(memory, data, context)).toEqual({ stored: [], refreshed: [], unchanged: 2, purged: 0 });
    expect(await active()).toEqual(snapshot);
    expect((await memory.call(MemoryPattern.Stats, {})).lastSeq).toBe(lastSeq);
  });

  it('stores a suggestion repeated in one exchange once', async () => {
    await extractExchange(memory, job(['Uses pnpm', 'uses pnpm.']), context);
    expect(await active()).toHaveLength(1);
  });

  it('also takes facts the person stated in their message', async () => {
    await extractExchange(memory, job([], 'Remember that the staging database is read-only. Can you help?'), context);
    expect((await active()).map((item) => [item.content, item.source])).toEqual([['The staging database is read-only', 'extraction']]);
  });

  it('names stored facts by the exchange, so two exchanges under one client request id each store theirs (in two pools too)', async () => {
    const first = await extractExchange(memory, { ...job(['Prefers tea']), exchangeId: 'exchange-a' }, context);
    const second = await extractExchange(memory, { ...job(['Prefers tea']), pool: 'other', exchangeId: 'exchange-b' }, context);
    expect(first.stored).toEqual([extractedMemoryId('exchange-a', 'Prefers tea')]);
    expect(second.stored).toEqual([extractedMemoryId('exchange-b', 'Prefers tea')]);
    expect(await active('other')).toEqual([expect.objectContaining({ id: extractedMemoryId('exchange-b', 'Prefers tea'), content: 'Prefers tea' })]);
  });

  it('names them by the request id for a job enqueued before exchanges had ids, as it did then', async () => {
    const { exchangeId: _none, ...legacy } = job(['Prefers tea']);
    const outcome = await extractExchange(memory, legacy as unknown as Parameters<typeof extractExchange>[1], context);
    expect(outcome.stored).toEqual([extractedMemoryId('req-1', 'Prefers tea')]);
  });

  it('skips a candidate the memory service refuses as purged (gone) and stores the rest', async () => {
    const secret = await memory.call(MemoryPattern.Store, { pool: 'team', actor: 'user', content: 'The user secret is W' });
    await memory.call(MemoryPattern.Purge, { pool: 'team', id: secret.id, actor: 'user' });
    const outcome = await extractExchange(memory, job(['The user secret is W', 'The CI runs on Fridays']), context);
    expect(outcome.purged).toBe(1);
    expect((await active()).map((item) => item.content)).toEqual(['The CI runs on Fridays']);
  });
});
