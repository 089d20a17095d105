import { describe, expect, it } from '@jest/globals';
import { decideStore, type StoreCommand } from './decide-store.js';
import { WriteRejection } from './write-command.js';
import { context, expected, given, stored } from './decide.fixture.js';

const storeCommand = (overrides: Partial<StoreCommand> = {}): StoreCommand => ({
  context: context(),
  chosenId: undefined,
  freshId: () => 'fresh1',
  type: 'MEMORY',
  category: 'project',
  content: 'the build uses nx',
  confidence: 0.9,
  source: 'user',
  dedupe: false,
  ...overrides,
});

const NOTHING_PURGED = { chosenId: false, text: false } as const;

describe('decideStore', () => {
  it('given nothing under the id, when a store comes, then memory.stored under a fresh id', () => {
    const decision = decideStore(storeCommand(), { atChosenId: undefined, sameFact: null, purged: NOTHING_PURGED });
    expect(decision).toEqual({
      outcome: 'stored',
      id: 'fresh1',
      events: [
        expected('memory.stored', {
          id: 'fresh1',
          type: 'MEMORY',
          category: 'project',
          content: 'the build uses nx',
          confidence: 0.9,
          source: 'user',
        }),
      ],
    });
  });

  it('given an unused chosen id, when a store names it, then the entry is stored under that id (no fresh id drawn)', () => {
    const decision = decideStore(
      storeCommand({
        chosenId: 'mine1',
        freshId: () => {
          throw new Error('no fresh id needed');
        },
      }),
      { atChosenId: undefined, sameFact: null, purged: NOTHING_PURGED },
    );
    expect(decision.outcome).toBe('stored');
    expect(decision.events[0]?.data).toMatchObject({ id: 'mine1' });
  });

  it('given the chosen id stored in this pool, when the store is retried, then nothing is written and that entry answers', () => {
    const { entry } = given(stored('mine1'));
    expect(decideStore(storeCommand({ chosenId: 'mine1' }), { atChosenId: entry('mine1'), sameFact: null, purged: NOTHING_PURGED })).toEqual({
      outcome: 'retried',
      id: 'mine1',
      events: [],
    });
  });

  it('given the chosen id stored in another pool, when a store names it, then a conflict', () => {
    const { entry } = given(stored('mine1', { pool: 'other' }));
    const when = () => decideStore(storeCommand({ chosenId: 'mine1' }), { atChosenId: entry('mine1'), sameFact: null, purged: NOTHING_PURGED });
    expect(when).toThrow(new WriteRejection('conflict', 'id mine1 is taken by another pool'));
    expect(when).toThrow(expect.objectContaining({ code: 'conflict' }));
  });

  it('given an entry saying the same, when a store with dedupe comes, then only a reference to that entry', () => {
    const { entry } = given(stored('old1', { content: 'the build uses nx' }));
    const decision = decideStore(storeCommand({ dedupe: true }), { atChosenId: undefined, sameFact: entry('old1') ?? null, purged: NOTHING_PURGED });
    expect(decision).toEqual({ outcome: 'said-again', id: 'old1', events: [expected('memory.referenced', { ids: ['old1'] })] });
  });

  it('given an entry saying the same, when a store without dedupe comes, then a copy is stored', () => {
    const { entry } = given(stored('old1', { content: 'the build uses nx' }));
    expect(decideStore(storeCommand(), { atChosenId: undefined, sameFact: entry('old1') ?? null, purged: NOTHING_PURGED }).outcome).toBe('stored');
  });

  it('given the chosen id stored, when a retry with dedupe comes, then the retry wins over the reference', () => {
    const { entry } = given(stored('mine1'), stored('old1', { content: 'the build uses nx' }));
    const decision = decideStore(storeCommand({ chosenId: 'mine1', dedupe: true }), {
      atChosenId: entry('mine1'),
      sameFact: entry('old1') ?? null,
      purged: NOTHING_PURGED,
    });
    expect(decision.outcome).toBe('retried');
  });

  it('given the chosen id purged, when the store is retried (Idempotency-Key, replayed tool call), then gone: a purged id stays purged', () => {
    const when = () =>
      decideStore(storeCommand({ chosenId: 'idem1' }), { atChosenId: undefined, sameFact: null, purged: { chosenId: true, text: false } });
    expect(when).toThrow(expect.objectContaining({ name: 'WriteRejection', code: 'gone' }));
    expect(when).toThrow(/memory idem1 was purged/);
  });

  it.each(['llm', 'marker', 'extraction'] as const)(
    'given the text purged from the pool, when a store from a conversation (%s) brings it again, then gone',
    (source) => {
      const when = () =>
        decideStore(storeCommand({ source, chosenId: 'ext-1' }), { atChosenId: undefined, sameFact: null, purged: { chosenId: false, text: true } });
      expect(when).toThrow(expect.objectContaining({ code: 'gone' }));
    },
  );

  it('given the text purged from the pool, when a person stores it again, then it is stored (a new entry, a new id)', () => {
    const decision = decideStore(storeCommand({ source: 'user' }), {
      atChosenId: undefined,
      sameFact: null,
      purged: { chosenId: false, text: true },
    });
    expect(decision).toMatchObject({ outcome: 'stored', id: 'fresh1' });
  });
});
