import { describe, expect, it } from '@jest/globals';
import { explicitFacts } from './exchange-facts.js';
import { extractedMemoryId, extractExchange } from './extract-exchange.js';
import { entry, FakeMemory } from './fake-memory.fixture.js';

const context = { jobId: 'extract.req-1', enqueuedAt: new Date('2026-12-01T11:00:00.000Z') };

function job(suggestions: string[], user = 'How do I run the tests?') {
  return { pool: 'team', suggestions, exchange: { user, assistant: 'Run npm test.' }, requestId: 'req-1', exchangeId: 'exchange-1' };
}

describe('extractExchange', () => {
  it('stores new suggestions, categorized, as the worker, caused by the request', async () => {
    const memory = new FakeMemory();
    const outcome = await extractExchange(memory, job(['User prefers concise answers', 'The CI build fails when the cache is stale']), context);
    expect(outcome.stored).toHaveLength(2);
    expect(memory.active().map((item) => [item.type, item.category, item.source])).toEqual([
      ['USER', 'preference', 'marker'],
      ['MEMORY', 'gotcha', 'marker'],
    ]);
    expect(memory.log.every((event) => event.actor === 'worker:extract' && event.causationId === 'req-1')).toBe(true);
  });

  it('refreshes an entry that says the same thing instead of adding a copy', async () => {
    const memory = new FakeMemory([entry({ id: 'm1', content: 'The user prefers concise answers.' })]);
    const outcome = await extractExchange(memory, job(['User prefers concise answers']), context);
    expect(outcome).toEqual({ stored: [], refreshed: ['m1'], unchanged: 0, purged: 0 });
    expect(memory.active()).toHaveLength(1);
    expect(memory.entries.get('m1')?.referenceCount).toBe(1);
  });

  it('finds the entry that says the same thing however many entries the pool holds', async () => {
    const others = Array.from({ length: 1_200 }, (_, i) => entry({ id: `f${i}`, content: `Service ${i} listens on port ${4_000 + i}` }));
    const memory = new FakeMemory([...others, entry({ id: 'm1', content: 'The user prefers concise answers.' })]);
    const outcome = await extractExchange(memory, job(['User prefers concise answers']), context);
    expect(outcome).toEqual({ stored: [], refreshed: ['m1'], unchanged: 0, purged: 0 });
    expect(memory.active()).toHaveLength(1_201);
  });

  it('leaves the same state when delivered twice', async () => {
    const memory = new FakeMemory([entry({ id: 'm1', content: 'The user prefers concise answers.' })]);
    const data = job(['User prefers concise answers', 'Uses pnpm workspaces in the monorepo']);
    await extractExchange(memory, data, context);
    const snapshot = JSON.stringify([...memory.entries.values()]);
    const again = await extractExchange(memory, data, context);
    expect(again).toEqual({ stored: [], refreshed: [], unchanged: 2, purged: 0 });
    expect(JSON.stringify([...memory.entries.values()])).toBe(snapshot);
  });

  it('stores a suggestion repeated in one exchange once', async () => {
    const memory = new FakeMemory();
    await extractExchange(memory, job(['Uses pnpm', 'uses pnpm.']), context);
    expect(memory.active()).toHaveLength(1);
  });

  it('also takes facts the person stated in their message', async () => {
    const memory = new FakeMemory();
    await extractExchange(memory, job([], 'Remember that the staging database is read-only. Can you help?'), context);
    expect(memory.active().map((item) => [item.content, item.source])).toEqual([['The staging database is read-only', 'extraction']]);
  });

  it('derives stored ids from the request and the text', () => {
    expect(extractedMemoryId('exchange-1', 'Uses pnpm')).toBe(extractedMemoryId('exchange-1', 'uses pnpm'));
    expect(extractedMemoryId('exchange-1', 'Uses pnpm')).not.toBe(extractedMemoryId('exchange-2', 'Uses pnpm'));
  });
});

describe('explicitFacts', () => {
  it('finds what a person asked to remember or said about themselves, and nothing else', () => {
    expect(explicitFacts('Please remember that we deploy on Fridays. I prefer tabs over spaces! What is 2+2?')).toEqual([
      'We deploy on Fridays',
      'I prefer tabs over spaces',
    ]);
    expect(explicitFacts('Can you fix this bug? It crashes.')).toEqual([]);
  });
});

describe('extractExchange and the exchange id', () => {
  it('names stored facts by the exchange, so two exchanges under one client request id each store theirs (in two pools too)', async () => {
    const memory = new FakeMemory();
    const first = await extractExchange(memory, { ...job(['Prefers tea']), exchangeId: 'exchange-a' }, context);
    const second = await extractExchange(memory, { ...job(['Prefers tea']), pool: 'other', exchangeId: 'exchange-b' }, context);
    expect(first.stored).toEqual([extractedMemoryId('exchange-a', 'Prefers tea')]);
    expect(second.stored).toEqual([extractedMemoryId('exchange-b', 'Prefers tea')]);
  });

  it('names them by the request id for a job enqueued before exchanges had ids, as it did then', async () => {
    const memory = new FakeMemory();
    const { exchangeId: _none, ...legacy } = job(['Prefers tea']);
    const outcome = await extractExchange(memory, legacy as unknown as Parameters<typeof extractExchange>[1], context);
    expect(outcome.stored).toEqual([extractedMemoryId('req-1', 'Prefers tea')]);
  });
});

describe('extractExchange after a purge', () => {
  it('skips a candidate the memory service refuses as purged (gone) and stores the rest', async () => {
    const memory = new FakeMemory();
    memory.purgedTexts.add('the user secret is w');
    const outcome = await extractExchange(memory, job(['The user secret is W', 'The CI runs on Fridays']), context);
    expect(outcome.purged).toBe(1);
    expect(memory.active().map((item) => item.content)).toEqual(['The CI runs on Fridays']);
  });
});
