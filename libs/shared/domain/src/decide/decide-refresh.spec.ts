import { describe, expect, it } from '@jest/globals';
import { decideRecordReferences, decideRefresh } from './decide-refresh.js';
import { WriteRejection } from './write-command.js';
import { context, expected, given, past, stored } from './decide.fixture.js';

describe('decideRefresh', () => {
  it('given entries, when refreshed with a repeat, then one memory.referenced naming each once', () => {
    const { lookup } = given(stored('a'), stored('b'));
    expect(decideRefresh({ context: context(), ids: ['a', 'b', 'a'] }, lookup)).toEqual({
      ids: ['a', 'b'],
      events: [expected('memory.referenced', { ids: ['a', 'b'] })],
    });
  });

  it('given an archived entry, when refreshed, then it is referenced too', () => {
    const { lookup } = given(stored('a'), past('memory.archived', { id: 'a', reason: 'archived' }));
    expect(decideRefresh({ context: context(), ids: ['a'] }, lookup).events).toEqual([expected('memory.referenced', { ids: ['a'] })]);
  });

  it('given one id of another pool, when refreshed, then not found and nothing referenced', () => {
    const { lookup } = given(stored('a'), stored('b', { pool: 'q' }));
    expect(() => decideRefresh({ context: context(), ids: ['a', 'b'] }, lookup)).toThrow(
      new WriteRejection('not_found', 'memory b not found in pool p'),
    );
  });
});

describe('decideRecordReferences (a search recording its hits)', () => {
  it('given hits still in the pool, then one memory.referenced for them', () => {
    expect(decideRecordReferences({ context: context({ actor: 'llm' }), ids: ['a', 'b'] }, new Set(['a', 'b']))).toEqual([
      expected('memory.referenced', { ids: ['a', 'b'] }, 1, { actor: 'llm' }),
    ]);
  });

  it('given a hit purged since the search, then only the others', () => {
    expect(decideRecordReferences({ context: context(), ids: ['a', 'b'] }, new Set(['b']))).toEqual([expected('memory.referenced', { ids: ['b'] })]);
  });

  it('given every hit purged since, then nothing', () => {
    expect(decideRecordReferences({ context: context(), ids: ['a'] }, new Set())).toEqual([]);
  });
});
