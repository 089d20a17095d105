import { describe, expect, it } from '@jest/globals';
import { decidePurge } from './decide-purge.js';
import { WriteRejection } from './write-command.js';
import { context, expected, given, past, stored } from './decide.fixture.js';

describe('decidePurge', () => {
  it('given an active entry, when purged, then memory.purged', () => {
    const { entry } = given(stored('a'));
    expect(decidePurge({ context: context(), id: 'a', forbids: [] }, entry('a'))).toEqual([expected('memory.purged', { id: 'a' })]);
  });

  it('given an archived entry, when purged, then memory.purged (archived entries can be forgotten too)', () => {
    const { entry } = given(stored('a'), past('memory.archived', { id: 'a', reason: 'archived' }));
    expect(decidePurge({ context: context(), id: 'a', forbids: [] }, entry('a'))).toEqual([expected('memory.purged', { id: 'a' })]);
  });

  it('given a purged entry, when purged again, then not found', () => {
    const { entry } = given(stored('a'), past('memory.purged', { id: 'a' }));
    expect(() => decidePurge({ context: context(), id: 'a', forbids: [] }, entry('a'))).toThrow(
      new WriteRejection('not_found', 'memory a not found in pool p'),
    );
  });

  it('given an entry, when purged with the fingerprints of its texts, then memory.purged records them, each once', () => {
    const { entry } = given(stored('a'));
    expect(decidePurge({ context: context(), id: 'a', forbids: ['f1', 'f2', 'f1'] }, entry('a'))).toEqual([
      expected('memory.purged', { id: 'a', forbids: ['f1', 'f2'] }),
    ]);
  });
});
