import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { categorizeEntry } from '@engram/worker-handlers';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

describe('the worker’s categorize job against the real memory service', () => {
  const under = memoryServicePerTest();
  const memory = memoryInProcess(() => under.service);
  const store = (content: string, category?: 'environment') =>
    memory.call(MemoryPattern.Store, { pool: 'team', actor: 'llm', content, ...(category ? { category } : {}) });
  const job = (memoryId: string) => ({ pool: 'team', memoryId, eventId: 'ev-stored-1' });
  const events = async () => (await memory.call(MemoryPattern.EventsAfter, { after: 0 })).map((event) => event.type);

  it('categorizes an uncategorized entry as the worker, caused by the stored event', async () => {
    const entry = await store('Docker daemon crashed on M1');
    expect(await categorizeEntry(memory, job(entry.id))).toEqual({ outcome: 'categorized', category: 'gotcha' });
    expect(await memory.call(MemoryPattern.Get, { pool: 'team', id: entry.id })).toMatchObject({ category: 'gotcha' });
    const [categorized] = (await memory.call(MemoryPattern.EventsAfter, { after: 1 })).filter((event) => event.type === 'memory.categorized');
    expect(categorized).toMatchObject({ actor: 'worker:categorize', causationId: 'ev-stored-1', data: { id: entry.id, category: 'gotcha' } });
  });

  it('does the same once when delivered twice', async () => {
    const entry = await store('User prefers concise answers');
    await categorizeEntry(memory, job(entry.id));
    expect(await categorizeEntry(memory, job(entry.id))).toEqual({ outcome: 'already-categorized' });
    expect(await events()).toEqual(['memory.stored', 'memory.categorized']);
  });

  it('leaves the category null when the keywords are not decisive', async () => {
    const entry = await store('hello there');
    expect(await categorizeEntry(memory, job(entry.id))).toEqual({ outcome: 'uncertain' });
    expect(await events()).toEqual(['memory.stored']);
  });

  it('never overrides a category a person or the model chose', async () => {
    const entry = await store('Docker crashed', 'environment');
    expect(await categorizeEntry(memory, job(entry.id))).toEqual({ outcome: 'already-categorized' });
    expect(await memory.call(MemoryPattern.Get, { pool: 'team', id: entry.id })).toMatchObject({ category: 'environment' });
  });

  it('treats an entry that is gone, of another pool or archived as done, writing nothing', async () => {
    expect(await categorizeEntry(memory, job('no-such-entry'))).toEqual({ outcome: 'gone' });
    const elsewhere = await memory.call(MemoryPattern.Store, { pool: 'other', actor: 'llm', content: 'Docker crashed again' });
    expect(await categorizeEntry(memory, job(elsewhere.id))).toEqual({ outcome: 'gone' });
    const archived = await store('Docker crashed');
    await memory.call(MemoryPattern.Archive, { pool: 'team', id: archived.id, actor: 'user' });
    expect(await categorizeEntry(memory, job(archived.id))).toEqual({ outcome: 'archived' });
    expect(await events()).toEqual(['memory.stored', 'memory.stored', 'memory.archived']);
  });
});
