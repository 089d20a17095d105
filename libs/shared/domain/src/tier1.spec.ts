import { describe, expect, it } from '@jest/globals';
import type { Category, MemoryEntry, MemoryType } from './memory-entry.js';
import { TIER1_CLOSE, TIER1_NOTE, TIER1_OPEN, buildTier1, planTier1 } from './tier1.js';

const now = new Date('2026-03-10T15:00:00.000Z');
function entry(id: string, overrides: Partial<MemoryEntry> & { category: Category | null; type?: MemoryType }): MemoryEntry {
  return {
    id,
    pool: 'p',
    type: 'MEMORY',
    content: `fact ${id}`,
    confidence: 1,
    createdAt: '2026-03-10T08:00:00.000Z',
    updatedAt: '2026-03-10T08:00:00.000Z',
    lastReferenced: null,
    referenceCount: 0,
    isConfirmed: false,
    isArchived: false,
    source: 'llm',
    supersededBy: null,
    supersedes: [],
    ...overrides,
  };
}
const build = (entries: MemoryEntry[], maxChars = 1000, at = now) => buildTier1(entries, { now: at, maxChars });

describe('Tier 1', () => {
  it('always includes USER entries and preference/person, highest effective confidence first', () => {
    const result = build([
      entry('pref', { category: 'preference', confidence: 0.5 }),
      entry('user', { category: null, type: 'USER', confidence: 0.9 }),
      entry('person', { category: 'person', confidence: 0.7 }),
    ]);
    expect(result.ids).toEqual(['user', 'person', 'pref']);
    expect(result.block).toBe(
      [
        TIER1_OPEN,
        TIER1_NOTE,
        '- [id:user] fact user (user, 0.9)',
        '- [id:person] fact person (person, 0.7)',
        '- [id:pref] fact pref (preference, 0.5)',
        TIER1_CLOSE,
      ].join('\n'),
    );
  });

  it('says the facts are already in context and memory_search is for the rest', () => {
    expect(TIER1_NOTE).toMatch(/already in your context/);
    expect(TIER1_NOTE).toMatch(/memory_search/);
  });

  it('includes environment/project only when recently referenced and confident', () => {
    const result = build([
      entry('recent', { category: 'project', lastReferenced: '2026-03-08T00:00:00.000Z' }),
      entry('never', { category: 'project' }),
      entry('old', { category: 'environment', createdAt: '2026-01-01T00:00:00.000Z', lastReferenced: '2026-02-01T00:00:00.000Z' }),
      entry('weak', { category: 'environment', confidence: 0.4, lastReferenced: '2026-03-09T00:00:00.000Z' }),
    ]);
    expect(result.ids).toEqual(['recent']);
  });

  it('never includes decisions, gotchas, uncategorized facts or archived entries', () => {
    const result = build([
      entry('d', { category: 'decision', type: 'USER' }),
      entry('g', { category: 'gotcha', lastReferenced: now.toISOString() }),
      entry('n', { category: null, lastReferenced: now.toISOString() }),
      entry('a', { category: 'preference', isArchived: true }),
    ]);
    expect(result).toEqual({ block: '', ids: [] });
  });

  it('applies decay: an old unused preference sinks below fresher ones and drops out under 0.3', () => {
    const result = build([
      entry('old', { category: 'preference', createdAt: '2026-02-20T00:00:00.000Z' }),
      entry('new', { category: 'preference', confidence: 0.8 }),
      entry('faded', { category: 'preference', createdAt: '2025-12-01T00:00:00.000Z' }),
    ]);
    expect(result.ids).toEqual(['new', 'old']);
    expect(result.block).toContain('[id:old] fact old (preference, 0.4)');
  });

  it('stays within the budget, skipping entries that do not fit', () => {
    const long = entry('long', { category: 'preference', confidence: 1, content: 'x'.repeat(300) });
    const short = entry('short', { category: 'preference', confidence: 0.9 });
    const result = build([long, short], 200);
    expect(result.ids).toEqual(['short']);
    expect(result.block.length).toBeLessThanOrEqual(200);
    expect(build([long], 50)).toEqual({ block: '', ids: [] });
  });

  it('is byte-identical within a day whatever the order of entries, and changes only across days', () => {
    const entries = [
      entry('b', { category: 'preference', createdAt: '2026-03-01T00:00:00.000Z' }),
      entry('a', { category: 'preference', createdAt: '2026-03-01T00:00:00.000Z' }),
      entry('c', { category: 'person', confidence: 0.95 }),
    ];
    const morning = build(entries, 1000, new Date('2026-03-10T00:00:01.000Z'));
    const evening = build([...entries].reverse(), 1000, new Date('2026-03-10T23:59:59.000Z'));
    expect(evening.block).toBe(morning.block);
    expect(morning.ids).toEqual(['c', 'a', 'b']);
    expect(build(entries, 1000, new Date('2026-03-25T12:00:00.000Z')).block).not.toBe(morning.block);
  });

  it('keeps each entry on one line', () => {
    const result = build([entry('m', { category: 'preference', content: 'line one\nline two\t end' })]);
    expect(result.block).toContain('- [id:m] line one line two end (preference, 1.0)');
  });

  describe('plan: why each entry is or is not in the block', () => {
    const entries = [
      entry('in', { category: 'preference' }),
      entry('full', { category: 'preference', confidence: 0.9, content: 'y'.repeat(300) }),
      entry('decision', { category: 'decision', type: 'USER' }),
      entry('loose', { category: null }),
      entry('faded', { category: 'preference', createdAt: '2025-12-01T00:00:00.000Z' }),
      entry('weak', { category: 'project', confidence: 0.4, lastReferenced: '2026-03-09T00:00:00.000Z' }),
      entry('stale', { category: 'environment', lastReferenced: '2026-02-28T00:00:00.000Z' }),
      entry('gone', { category: 'preference', isArchived: true }),
    ];

    it('names a reason for every entry: included, budget, category, decayed, not recent, archived', () => {
      const plan = planTier1(entries, { now, maxChars: 250 });
      expect(Object.fromEntries(plan.decisions.map((decision) => [decision.entry.id, decision.reason]))).toEqual({
        in: 'included',
        full: 'budget',
        decision: 'category',
        loose: 'category',
        faded: 'decayed',
        weak: 'decayed',
        stale: 'not_recent',
        gone: 'archived',
      });
    });

    it('gives the same block and ids as buildTier1, and the line each included entry has in it', () => {
      const plan = planTier1(entries, { now, maxChars: 250 });
      expect({ block: plan.block, ids: plan.ids }).toEqual(build(entries, 250));
      for (const decision of plan.decisions.filter((d) => d.reason === 'included')) expect(plan.block).toContain(decision.line);
      expect(plan.decisions.find((d) => d.entry.id === 'full')?.line).toMatch(/^- \[id:full\] y+ \(preference, 0\.9\)$/);
    });
  });
});
