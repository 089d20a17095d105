import { describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, EVENT_TYPES, type EventDataByType, type EventType, type MemoryEvent } from './events.js';
import { INITIAL_MEMORY_STATE, affectedIds, evolve, replayEvents, type MemoryState } from './evolve.js';

let seq = 0;
function event<T extends EventType>(type: T, data: EventDataByType[T], at = `2026-01-0${(seq % 9) + 1}T10:00:00.000Z`, pool = 'p'): MemoryEvent {
  seq += 1;
  return { type, data, seq, id: `e${seq}`, at, pool, actor: 'user', causationId: null, schemaVersion: EVENT_SCHEMA_VERSION } as MemoryEvent;
}
const given = (...events: MemoryEvent[]): MemoryState => events.reduce(evolve, INITIAL_MEMORY_STATE);
const stored = (id: string, content = `content of ${id}`, pool = 'p') =>
  event('memory.stored', { id, type: 'MEMORY', category: 'project', content, confidence: 0.9, source: 'llm' }, '2026-01-01T00:00:00.000Z', pool);

describe('evolve', () => {
  it('memory.stored creates an active, unreferenced entry', () => {
    const state = given(stored('a'));
    expect(state.entries.get('a')).toMatchObject({
      id: 'a',
      pool: 'p',
      type: 'MEMORY',
      category: 'project',
      content: 'content of a',
      confidence: 0.9,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      lastReferenced: null,
      referenceCount: 0,
      isConfirmed: false,
      isArchived: false,
      source: 'llm',
      supersededBy: null,
      supersedes: [],
    });
  });

  it('memory.stored never overwrites an existing id', () => {
    const state = given(stored('a', 'first'), stored('a', 'second'));
    expect(state.entries.get('a')?.content).toBe('first');
  });

  it('memory.updated changes only the given fields', () => {
    const state = given(stored('a'), event('memory.updated', { id: 'a', content: 'new' }, '2026-01-05T00:00:00.000Z'));
    expect(state.entries.get('a')).toMatchObject({ content: 'new', category: 'project', type: 'MEMORY', updatedAt: '2026-01-05T00:00:00.000Z' });
    const recategorized = evolve(state, event('memory.updated', { id: 'a', category: null, type: 'USER' }));
    expect(recategorized.entries.get('a')).toMatchObject({ content: 'new', category: null, type: 'USER' });
  });

  it('memory.categorized sets the category', () => {
    const state = given(stored('a'), event('memory.categorized', { id: 'a', category: 'gotcha' }));
    expect(state.entries.get('a')?.category).toBe('gotcha');
  });

  it('memory.referenced restarts decay and counts each id once per event', () => {
    const state = given(stored('a'), stored('b'), event('memory.referenced', { ids: ['a', 'a', 'b', 'missing'] }, '2026-01-07T00:00:00.000Z'));
    expect(state.entries.get('a')).toMatchObject({ lastReferenced: '2026-01-07T00:00:00.000Z', referenceCount: 1 });
    expect(state.entries.get('a')?.updatedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(state.entries.has('missing')).toBe(false);
  });

  it('memory.referenced summed by compaction adds each id its count and takes its last time', () => {
    const before = [stored('a'), stored('b'), event('memory.referenced', { ids: ['a'] })];
    const summed = event(
      'memory.referenced',
      { ids: ['a', 'b'], counts: [3, 1], lastAt: ['2026-01-05T00:00:00.000Z', '2026-01-06T00:00:00.000Z'], folds: { from: 3, events: 4 } },
      '2026-01-07T00:00:00.000Z',
    );
    const state = given(...before, summed);
    expect(state.entries.get('a')).toMatchObject({ referenceCount: 4, lastReferenced: '2026-01-05T00:00:00.000Z' });
    expect(state.entries.get('b')).toMatchObject({ referenceCount: 1, lastReferenced: '2026-01-06T00:00:00.000Z' });
  });

  it('memory.confirmed sets the flag and full confidence; unconfirming keeps confidence', () => {
    const confirmed = given(stored('a'), event('memory.confirmed', { id: 'a', confirmed: true }));
    expect(confirmed.entries.get('a')).toMatchObject({ isConfirmed: true, confidence: 1 });
    const withdrawn = evolve(confirmed, event('memory.confirmed', { id: 'a', confirmed: false }));
    expect(withdrawn.entries.get('a')).toMatchObject({ isConfirmed: false, confidence: 1 });
  });

  it('memory.archived and memory.deleted hide the entry; memory.restored brings it back', () => {
    const archived = given(stored('a'), event('memory.archived', { id: 'a', reason: 'decay' }));
    expect(archived.entries.get('a')?.isArchived).toBe(true);
    const deleted = given(stored('b'), event('memory.deleted', { id: 'b', reason: null }));
    expect(deleted.entries.get('b')?.isArchived).toBe(true);
    const restored = evolve(deleted, event('memory.restored', { id: 'b' }));
    expect(restored.entries.get('b')?.isArchived).toBe(false);
  });

  it('a purged id stays purged: a later memory.stored or memory.consolidated under it creates nothing (logs from before purged ids were refused)', () => {
    const state = given(
      stored('a', 'secret'),
      event('memory.purged', { id: 'a', forbids: ['f'] }),
      stored('a', ''),
      event('memory.consolidated', { id: 'a', type: 'MEMORY', category: null, content: '', confidence: 1, supersedes: [], model: 'm' }),
    );
    expect(state.entries.has('a')).toBe(false);
    expect([...state.purged]).toEqual(['a']);
    expect(replayEvents([stored('b'), event('memory.purged', { id: 'b' }), stored('b')]).entries.has('b')).toBe(false);
  });

  it('memory.purged removes the entry entirely', () => {
    const state = given(stored('a'), stored('b'), event('memory.purged', { id: 'a' }));
    expect([...state.entries.keys()]).toEqual(['b']);
  });

  it('memory.consolidated creates the merged entry and archives what it supersedes', () => {
    const state = given(
      stored('a'),
      stored('b'),
      event('memory.consolidated', {
        id: 'c',
        type: 'USER',
        category: 'preference',
        content: 'merged',
        confidence: 0.8,
        supersedes: ['a', 'b'],
        model: 'off',
      }),
    );
    expect(state.entries.get('c')).toMatchObject({ content: 'merged', source: 'consolidation', supersedes: ['a', 'b'], isArchived: false });
    expect(state.entries.get('a')).toMatchObject({ isArchived: true, supersededBy: 'c' });
    expect(state.entries.get('b')).toMatchObject({ isArchived: true, supersededBy: 'c' });
    const restored = evolve(state, event('memory.restored', { id: 'a' }));
    expect(restored.entries.get('a')).toMatchObject({ isArchived: false, supersededBy: null });
  });

  it('ignores events about ids of another pool', () => {
    const state = given(stored('a', 'mine', 'p'), event('memory.purged', { id: 'a' }, undefined, 'other'));
    expect(state.entries.get('a')?.content).toBe('mine');
  });

  it('applying the same event twice changes nothing', () => {
    const reference = event('memory.referenced', { ids: ['a'] });
    const once = given(stored('a'), reference);
    expect(evolve(once, reference)).toBe(once);
  });

  it('knows the entries every event type touches', () => {
    const samples: Record<EventType, MemoryEvent> = {
      'memory.stored': stored('x'),
      'memory.updated': event('memory.updated', { id: 'x' }),
      'memory.categorized': event('memory.categorized', { id: 'x', category: 'person' }),
      'memory.referenced': event('memory.referenced', { ids: ['x', 'y'] }),
      'memory.confirmed': event('memory.confirmed', { id: 'x', confirmed: true }),
      'memory.archived': event('memory.archived', { id: 'x', reason: 'r' }),
      'memory.restored': event('memory.restored', { id: 'x' }),
      'memory.deleted': event('memory.deleted', { id: 'x', reason: null }),
      'memory.purged': event('memory.purged', { id: 'x' }),
      'memory.consolidated': event('memory.consolidated', {
        id: 'z',
        type: 'MEMORY',
        category: null,
        content: 'm',
        confidence: 1,
        supersedes: ['x', 'y'],
        model: 'off',
      }),
    };
    for (const type of EVENT_TYPES) expect(affectedIds(samples[type])).toContain(type === 'memory.consolidated' ? 'z' : 'x');
  });

  it('replayEvents folds to the same state as evolve', () => {
    const events = [stored('a'), stored('b'), event('memory.referenced', { ids: ['a'] }), event('memory.purged', { id: 'b' })];
    const folded = replayEvents(events);
    const evolved = given(...events);
    expect(folded.lastSeq).toBe(evolved.lastSeq);
    expect([...folded.entries]).toEqual([...evolved.entries]);
  });
});
