import { describe, expect, it } from '@jest/globals';
import { ARCHIVE_THRESHOLD, calendarDaysSince, decayRate, effectiveConfidence, shouldArchive } from './decay.js';
import type { Category } from './memory-entry.js';

const created = '2026-01-01T00:00:00.000Z';
const daysLater = (days: number): Date => new Date(Date.parse(created) + days * 86_400_000);
const entry = (category: Category | null, lastReferenced: string | null = null) => ({
  confidence: 1,
  category,
  createdAt: created,
  lastReferenced,
  isArchived: false,
});

describe('decay', () => {
  it('uses 0.95 per day, and 0.98 for decisions and gotchas', () => {
    expect(decayRate('preference')).toBe(0.95);
    expect(decayRate(null)).toBe(0.95);
    expect(decayRate('decision')).toBe(0.98);
    expect(decayRate('gotcha')).toBe(0.98);
  });

  it('multiplies confidence by rate^days since creation when never referenced', () => {
    expect(effectiveConfidence(entry('project'), daysLater(10))).toBeCloseTo(0.95 ** 10, 10);
    expect(effectiveConfidence(entry('gotcha'), daysLater(10))).toBeCloseTo(0.98 ** 10, 10);
    expect(effectiveConfidence({ ...entry('project'), confidence: 0.5 }, daysLater(2))).toBeCloseTo(0.5 * 0.95 ** 2, 10);
  });

  it('counts from the last reference when there is one', () => {
    const referenced = entry('project', daysLater(8).toISOString());
    expect(effectiveConfidence(referenced, daysLater(10))).toBeCloseTo(0.95 ** 2, 10);
  });

  it('never grows when the clock is behind the entry', () => {
    expect(effectiveConfidence(entry('project'), daysLater(-3))).toBe(1);
  });

  it('archives below 0.3: a plain fact after 24 days, a gotcha only after 60', () => {
    expect(ARCHIVE_THRESHOLD).toBe(0.3);
    expect(shouldArchive(entry('project'), daysLater(23))).toBe(false);
    expect(shouldArchive(entry('project'), daysLater(24))).toBe(true);
    expect(shouldArchive(entry('gotcha'), daysLater(24))).toBe(false);
    expect(shouldArchive(entry('gotcha'), daysLater(60))).toBe(true);
    expect(shouldArchive({ ...entry('project'), isArchived: true }, daysLater(100))).toBe(false);
  });

  it('counts calendar days for day-granular callers', () => {
    expect(calendarDaysSince('2026-01-01T23:59:00.000Z', new Date('2026-01-02T00:01:00.000Z'))).toBe(1);
    expect(calendarDaysSince('2026-01-01T00:01:00.000Z', new Date('2026-01-01T23:59:00.000Z'))).toBe(0);
  });
});
