import { MemoryPattern } from '@engram/contracts';
import { describe, expect, it } from '@jest/globals';
import { categorizeEntry } from './categorize-entry.js';
import { entry, FakeMemory } from './fake-memory.fixture.js';

const job = { pool: 'team', memoryId: 'm1', eventId: 'ev-stored-1' };

describe('categorizeEntry', () => {
  it('categorizes an uncategorized entry as the worker, caused by the stored event', async () => {
    const memory = new FakeMemory([entry({ id: 'm1', content: 'Docker daemon crashed on M1' })]);
    expect(await categorizeEntry(memory, job)).toEqual({ outcome: 'categorized', category: 'gotcha' });
    expect(memory.entries.get('m1')?.category).toBe('gotcha');
    expect(memory.log).toMatchObject([{ type: 'memory.categorized', actor: 'worker:categorize', causationId: 'ev-stored-1' }]);
  });

  it('does the same once when delivered twice', async () => {
    const memory = new FakeMemory([entry({ id: 'm1', content: 'User prefers concise answers' })]);
    await categorizeEntry(memory, job);
    expect(await categorizeEntry(memory, job)).toEqual({ outcome: 'already-categorized' });
    expect(memory.writes()).toHaveLength(1);
  });

  it('leaves the category null when the keywords are not decisive', async () => {
    const memory = new FakeMemory([entry({ id: 'm1', content: 'hello there' })]);
    expect(await categorizeEntry(memory, job)).toEqual({ outcome: 'uncertain' });
    expect(memory.writes()).toEqual([]);
  });

  it('never overrides a category a person or the model chose', async () => {
    const memory = new FakeMemory([entry({ id: 'm1', content: 'Docker crashed', category: 'environment' })]);
    expect(await categorizeEntry(memory, job)).toEqual({ outcome: 'already-categorized' });
  });

  it('treats an entry that is gone or archived as done', async () => {
    expect(await categorizeEntry(new FakeMemory(), job)).toEqual({ outcome: 'gone' });
    const archived = new FakeMemory([entry({ id: 'm1', content: 'Docker crashed', isArchived: true })]);
    expect(await categorizeEntry(archived, job)).toEqual({ outcome: 'archived' });
    expect(archived.calls.map((call) => call.pattern)).toEqual([MemoryPattern.Get]);
  });
});
