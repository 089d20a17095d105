import { describe, expect, it } from '@jest/globals';
import { VectorIndex } from './vector-index.js';

const code = (...words: number[]): Int32Array => Int32Array.from(words);
const entry = (id: string, pool: string, bits: Int32Array, extra: { archived?: boolean; category?: 'project' | null } = {}) => ({
  id,
  pool,
  hash: `h-${id}`,
  code: bits,
  archived: extra.archived ?? false,
  category: extra.category ?? null,
});

describe('VectorIndex', () => {
  const index = (): VectorIndex => {
    const built = new VectorIndex();
    built.set(entry('same', 'work', code(0b1111, 0)));
    built.set(entry('one-off', 'work', code(0b0111, 0)));
    built.set(entry('two-off', 'work', code(0b0011, 0)));
    built.set(entry('far', 'work', code(-1, -1)));
    built.set(entry('other-pool', 'home', code(0b1111, 0)));
    return built;
  };

  it("returns the closest codes of the searched pool only, never another pool's", () => {
    const found = index().candidates({ pool: 'work', code: code(0b1111, 0), count: 2, includeArchived: false });
    expect(found.map((candidate) => candidate.id).sort()).toEqual(['one-off', 'same']);
    expect(
      index()
        .candidates({ pool: 'home', code: code(0b1111, 0), count: 10, includeArchived: false })
        .map((c) => c.id),
    ).toEqual(['other-pool']);
    expect(index().candidates({ pool: 'nobody', code: code(0b1111, 0), count: 10, includeArchived: false })).toEqual([]);
  });

  it('returns every entry of a pool smaller than the count, and ties at the cut', () => {
    const built = index();
    expect(built.candidates({ pool: 'work', code: code(0, 0), count: 100, includeArchived: false })).toHaveLength(4);
    built.set(entry('also-one-off', 'work', code(0b1110, 0)));
    const found = built.candidates({ pool: 'work', code: code(0b1111, 0), count: 2, includeArchived: false }).map((c) => c.id);
    expect(found.sort()).toEqual(['also-one-off', 'one-off', 'same']);
  });

  it('leaves out archived entries unless asked, and entries of another category when one is asked', () => {
    const built = index();
    built.set(entry('same', 'work', code(0b1111, 0), { archived: true }));
    built.set(entry('one-off', 'work', code(0b0111, 0), { category: 'project' }));
    const ids = (query: { includeArchived: boolean; category?: 'project' }): string[] =>
      built
        .candidates({ pool: 'work', code: code(0b1111, 0), count: 1, ...query })
        .map((c) => c.id)
        .sort();
    expect(ids({ includeArchived: false })).toEqual(['one-off']);
    expect(ids({ includeArchived: true })).toEqual(['same']);
    expect(ids({ includeArchived: true, category: 'project' })).toEqual(['one-off']);
  });

  it('forgets a removed entry and keeps the others findable (the last slot moves into the hole)', () => {
    const built = index();
    built.remove('same', 'work');
    built.remove('same', 'work');
    expect(built.size('work')).toBe(3);
    const found = built.candidates({ pool: 'work', code: code(0b1111, 0), count: 1, includeArchived: false }).map((c) => c.id);
    expect(found).toEqual(['one-off']);
    built.remove('far', 'work');
    expect(built.candidates({ pool: 'work', code: code(-1, -1), count: 1, includeArchived: false }).map((c) => c.id)).toEqual(['one-off']);
    expect(built.size()).toBe(3);
  });

  it('moves an entry whose text changed to its new code', () => {
    const built = index();
    built.set({ ...entry('far', 'work', code(0b1111, 0)), hash: 'h-new' });
    expect(built.candidates({ pool: 'work', code: code(0b1111, 0), count: 1, includeArchived: false })).toEqual(
      expect.arrayContaining([{ id: 'far', hash: 'h-new' }]),
    );
  });

  it('grows past its first slots', () => {
    const built = new VectorIndex();
    for (let i = 0; i < 500; i++) built.set(entry(`m${i}`, 'big', code(i, -i)));
    expect(built.size('big')).toBe(500);
    expect(built.candidates({ pool: 'big', code: code(321, -321), count: 1, includeArchived: false })[0]?.id).toBe('m321');
  });

  it("finds the closest full codes in a pool large enough for the prefix stage, not the entries whose prefix alone is close", () => {
    let state = 7;
    const random = (): number => {
      state = (Math.imul(state, 1103515245) + 12345) | 0;
      return state;
    };
    const base = Int32Array.from({ length: 64 }, random);
    const flipped = (bits: number): Int32Array => {
      const copy = Int32Array.from(base);
      for (let bit = 0; bit < bits; bit++) copy[(bit * 7) % 64]! ^= 1 << (bit % 32);
      return copy;
    };
    const built = new VectorIndex();
    for (let i = 0; i < 3_000; i++) built.set(entry(`random-${i}`, 'big', Int32Array.from({ length: 64 }, random)));
    for (let k = 1; k <= 5; k++) built.set(entry(`near-${k}`, 'big', flipped(k * 20)));
    // Same first 512 bits as the query, random after them: ~768 bits away in all.
    const prefixTwin = Int32Array.from({ length: 64 }, (_, word) => (word < 16 ? base[word]! : random()));
    built.set(entry('prefix-twin', 'big', prefixTwin));

    const found = built.candidates({ pool: 'big', code: base, count: 5, includeArchived: false }).map((c) => c.id);
    expect(found.sort()).toEqual(['near-1', 'near-2', 'near-3', 'near-4', 'near-5']);
  });

  it('refuses codes of another length than the first', () => {
    const built = index();
    expect(() => built.set(entry('short', 'work', code(1)))).toThrow(/words/);
    expect(() => built.candidates({ pool: 'work', code: code(1), count: 1, includeArchived: false })).toThrow(/bits/);
  });
});
