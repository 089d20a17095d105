import { describe, expect, it } from '@jest/globals';
import { decideArchive, decideDelete, decideRestore } from './decide-archive.js';
import { context, expected, given, past, stored } from './decide.fixture.js';

describe('decideArchive (a person, or the decay sweep)', () => {
  it('given an active entry, when the decay sweep archives it, then memory.archived with its reason', () => {
    const { entry } = given(stored('a'));
    const reason = 'decayed: effective confidence 0.090 < 0.1 at 2026-03-01T12:00:00.000Z';
    expect(decideArchive({ context: context({ actor: 'worker:decay', causationId: 'job-7' }), id: 'a', reason }, entry('a'))).toEqual([
      expected('memory.archived', { id: 'a', reason }, 1, { actor: 'worker:decay', causationId: 'job-7' }),
    ]);
  });

  it('given an active entry, when archived without a reason, then the reason is "archived"', () => {
    const { entry } = given(stored('a'));
    expect(decideArchive({ context: context(), id: 'a', reason: null }, entry('a'))).toEqual([
      expected('memory.archived', { id: 'a', reason: 'archived' }),
    ]);
  });

  it('given an archived entry, when archived again (a second sweep), then nothing', () => {
    const { entry } = given(stored('a'), past('memory.archived', { id: 'a', reason: 'archived' }));
    expect(decideArchive({ context: context(), id: 'a', reason: null }, entry('a'))).toEqual([]);
  });

  it('given no entry, when archived, then not found', () => {
    expect(() => decideArchive({ context: context(), id: 'a', reason: null }, undefined)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('decideDelete', () => {
  it('given an active entry, when deleted, then memory.deleted with the reason as given', () => {
    const { entry } = given(stored('a'));
    expect(decideDelete({ context: context(), id: 'a', reason: null }, entry('a'))).toEqual([expected('memory.deleted', { id: 'a', reason: null })]);
  });

  it('given an archived entry, when deleted, then nothing', () => {
    const { entry } = given(stored('a'), past('memory.deleted', { id: 'a', reason: 'wrong' }));
    expect(decideDelete({ context: context(), id: 'a', reason: 'again' }, entry('a'))).toEqual([]);
  });

  it('given an entry of another pool, when deleted, then not found', () => {
    const { entry } = given(stored('a', { pool: 'q' }));
    expect(() => decideDelete({ context: context(), id: 'a', reason: null }, entry('a'))).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('decideRestore', () => {
  it('given an archived entry, when restored, then memory.restored', () => {
    const { entry } = given(stored('a'), past('memory.archived', { id: 'a', reason: 'archived' }));
    expect(decideRestore({ context: context(), id: 'a' }, entry('a'))).toEqual([expected('memory.restored', { id: 'a' })]);
  });

  it('given an active entry, when restored, then nothing', () => {
    const { entry } = given(stored('a'));
    expect(decideRestore({ context: context(), id: 'a' }, entry('a'))).toEqual([]);
  });

  it('given no entry, when restored, then not found', () => {
    expect(() => decideRestore({ context: context(), id: 'a' }, undefined)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});
