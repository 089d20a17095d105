import { describe, expect, it } from '@jest/globals';
import { FreshIds } from './fresh-ids.js';

/** Ids id0, id1, ... in order, with `stored` standing for the database. */
function setup(stored: Set<string>) {
  let next = 0;
  const queries: number[] = [];
  const ids = new FreshIds(
    () => `id${next++ % 1000}`,
    (candidates) => {
      queries.push(candidates.length);
      return new Set(candidates.filter((id) => stored.has(id)));
    },
  );
  return { ids, queries };
}

describe('FreshIds', () => {
  it('never hands out a stored id, an id in flight, or the same id twice', () => {
    const { ids } = setup(new Set(['id0', 'id2']));
    const inFlight = new Set(['id3']);
    const taken = Array.from({ length: 600 }, () => ids.take((id) => inFlight.has(id)));
    expect(taken.slice(0, 3)).toEqual(['id1', 'id4', 'id5']);
    expect(taken.filter((id) => ['id0', 'id2', 'id3'].includes(id))).toEqual([]);
    expect(new Set(taken.slice(0, 250)).size).toBe(250);
  });

  it('does not hand out an id that a write naming it stored after the check', () => {
    const { ids } = setup(new Set());
    expect(ids.take(() => false)).toBe('id0');
    ids.noteUsed('id1');
    expect(ids.take(() => false)).toBe('id2');
  });

  it('checks ids against the database one batch at a time, not one query per id', () => {
    const { ids, queries } = setup(new Set());
    for (let i = 0; i < 256; i++) ids.take(() => false);
    expect(queries).toEqual([256]);
  });
});
