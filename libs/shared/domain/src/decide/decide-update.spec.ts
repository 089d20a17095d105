import { describe, expect, it } from '@jest/globals';
import { decideCategorize, decideConfirm, decideUpdate } from './decide-update.js';
import { WriteRejection } from './write-command.js';
import { context, expected, given, past, stored } from './decide.fixture.js';

describe('decideUpdate', () => {
  it('given an entry, when only some fields differ, then memory.updated carries just those', () => {
    const { entry } = given(stored('a', { content: 'old text' }));
    const events = decideUpdate({ context: context(), id: 'a', content: 'new text', category: 'project', type: 'USER' }, entry('a'));
    expect(events).toEqual([expected('memory.updated', { id: 'a', content: 'new text', type: 'USER' })]);
  });

  it('given an entry, when the update says what it already says, then nothing', () => {
    const { entry } = given(stored('a', { content: 'same' }));
    expect(decideUpdate({ context: context(), id: 'a', content: 'same', category: 'project', type: 'MEMORY', confirmed: false }, entry('a'))).toEqual(
      [],
    );
  });

  it('given an unconfirmed entry, when an update changes text and confirms, then memory.updated then memory.confirmed', () => {
    const { entry } = given(stored('a'));
    expect(decideUpdate({ context: context(), id: 'a', category: null, confirmed: true }, entry('a'))).toEqual([
      expected('memory.updated', { id: 'a', category: null }, 1),
      expected('memory.confirmed', { id: 'a', confirmed: true }, 2),
    ]);
  });

  it('given an entry of another pool, when updated, then not found', () => {
    const { entry } = given(stored('a', { pool: 'other' }));
    expect(() => decideUpdate({ context: context(), id: 'a', content: 'x' }, entry('a'))).toThrow(
      new WriteRejection('not_found', 'memory a not found in pool p'),
    );
  });

  it('given no entry, when updated, then not found', () => {
    expect(() => decideUpdate({ context: context(), id: 'zz', content: 'x' }, undefined)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('decideConfirm', () => {
  it('given an unconfirmed entry, when confirmed, then memory.confirmed', () => {
    const { entry } = given(stored('a'));
    expect(decideConfirm({ context: context(), id: 'a', confirmed: true }, entry('a'))).toEqual([
      expected('memory.confirmed', { id: 'a', confirmed: true }),
    ]);
  });

  it('given a confirmed entry, when confirmed again, then nothing', () => {
    const { entry } = given(stored('a'), past('memory.confirmed', { id: 'a', confirmed: true }));
    expect(decideConfirm({ context: context(), id: 'a', confirmed: true }, entry('a'))).toEqual([]);
  });

  it('given a confirmed entry, when the confirmation is withdrawn, then memory.confirmed false', () => {
    const { entry } = given(stored('a'), past('memory.confirmed', { id: 'a', confirmed: true }));
    expect(decideConfirm({ context: context(), id: 'a', confirmed: false }, entry('a'))).toEqual([
      expected('memory.confirmed', { id: 'a', confirmed: false }),
    ]);
  });

  it('given no entry, when confirmed, then not found', () => {
    expect(() => decideConfirm({ context: context(), id: 'a', confirmed: true }, undefined)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('decideCategorize', () => {
  it('given an uncategorized entry, when categorized, then memory.categorized', () => {
    const { entry } = given(stored('a'), past('memory.updated', { id: 'a', category: null }));
    expect(decideCategorize({ context: context({ actor: 'worker:categorize' }), id: 'a', category: 'gotcha' }, entry('a'))).toEqual([
      expected('memory.categorized', { id: 'a', category: 'gotcha' }, 1, { actor: 'worker:categorize' }),
    ]);
  });

  it('given an entry in that category, when categorized again, then nothing', () => {
    const { entry } = given(stored('a'));
    expect(decideCategorize({ context: context(), id: 'a', category: 'project' }, entry('a'))).toEqual([]);
  });

  it('given a purged entry, when categorized, then not found', () => {
    const { entry } = given(stored('a'), past('memory.purged', { id: 'a' }));
    expect(() => decideCategorize({ context: context(), id: 'a', category: 'project' }, entry('a'))).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});
