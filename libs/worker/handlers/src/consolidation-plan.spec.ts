import { describe, expect, it } from '@jest/globals';
import { validatePlan } from './consolidation-plan.js';

const entries = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
const merge = { supersedes: ['a', 'b'], content: 'merged', type: 'MEMORY', category: null };

describe('validatePlan', () => {
  it('accepts a plan that accounts for every id exactly once', () => {
    const verdict = validatePlan(JSON.stringify({ merges: [merge], keep: ['c'] }), entries);
    expect(verdict).toEqual({ ok: true, plan: { merges: [merge], keep: ['c'] } });
  });

  it('reads a merge without a category as uncategorized', () => {
    const { category: _omitted, ...withoutCategory } = merge;
    const verdict = validatePlan(JSON.stringify({ merges: [withoutCategory], keep: ['c'] }), entries);
    expect(verdict.ok && verdict.plan.merges[0]?.category).toBeNull();
  });

  it('accepts the plan inside a markdown fence', () => {
    expect(validatePlan('```json\n' + JSON.stringify({ merges: [], keep: ['a', 'b', 'c'] }) + '\n```', entries).ok).toBe(true);
  });

  it.each([
    ['malformed JSON', '{"merges": [', /not valid JSON/],
    ['a dropped id', JSON.stringify({ merges: [merge], keep: [] }), /missing.*"c"/],
    ['an unknown id', JSON.stringify({ merges: [merge], keep: ['c', 'zzz'] }), /unknown id "zzz"/],
    ['an id used twice', JSON.stringify({ merges: [merge], keep: ['a', 'c'] }), /more than once/],
    ['a one-entry merge', JSON.stringify({ merges: [{ ...merge, supersedes: ['a'] }], keep: ['b', 'c'] }), /schema/],
    ['an empty content', JSON.stringify({ merges: [{ ...merge, content: ' ' }], keep: ['c'] }), /schema/],
    ['a bad category', JSON.stringify({ merges: [{ ...merge, category: 'misc' }], keep: ['c'] }), /schema/],
  ])('refuses %s', (_case, raw, problem) => {
    const verdict = validatePlan(raw, entries);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.problem).toMatch(problem);
  });
});
