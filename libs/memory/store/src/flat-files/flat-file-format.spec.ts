import { describe, expect, it } from '@jest/globals';
import { memoryEntry } from '@engram/testing';
import type { MemoryEntry } from '@engram/domain';
import { parseFlatFile, renderFlatFile } from './flat-file-format.js';

const entry = (id: string, content: string, category: MemoryEntry['category']): MemoryEntry => memoryEntry(id, { content, category });

describe('flat files', () => {
  it('separates entries with a § line and names each id and category', () => {
    const text = renderFlatFile('p', 'MEMORY', [entry('a1', 'uses zsh', 'environment'), entry('b2', 'no category', null)]);
    expect(text.split('\n')).toEqual([
      expect.stringMatching(/^<!-- engram: pool p, MEMORY entries/),
      '[id:a1] (environment) uses zsh',
      '§',
      '[id:b2] (uncategorized) no category',
      '',
    ]);
  });

  it('parses back what it rendered, including multi-line content and lines that look like separators', () => {
    const entries = [
      entry('a1', 'first line\n§\nthird line', 'project'),
      entry('b2', '\\§ and\n\\\\§', 'gotcha'),
      entry('c3', 'emoji 🎉 "quotes"', null),
    ];
    const { entries: parsed, skipped } = parseFlatFile(renderFlatFile('p', 'MEMORY', entries));
    expect(skipped).toEqual([]);
    expect(parsed).toEqual(entries.map(({ id, category, content }) => ({ id, category, content })));
  });

  it('renders an empty pool as the header only and parses it to nothing', () => {
    const text = renderFlatFile('p', 'USER', []);
    expect(text.split('\n')).toHaveLength(2);
    expect(parseFlatFile(text)).toEqual({ entries: [], skipped: [] });
  });

  it('skips blocks it cannot read instead of guessing', () => {
    const { entries, skipped } = parseFlatFile('[id:ok] (person) Ana\n§\nsomething a person typed\n§\n[id:x] (nonsense) y\n');
    expect(entries).toEqual([{ id: 'ok', category: 'person', content: 'Ana' }]);
    expect(skipped).toHaveLength(2);
  });
});
