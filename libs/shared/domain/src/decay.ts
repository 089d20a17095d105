import type { Category, MemoryEntry } from './memory-entry.js';

/** Daily decay of confidence for an unused entry. */
export const DECAY_RATE = 0.95;
/** Decisions and gotchas are rare but valuable when needed: they fade slower. */
export const SLOW_DECAY_RATE = 0.98;
/** Below this effective confidence an entry is archived by the decay job. */
export const ARCHIVE_THRESHOLD = 0.3;

export const DAY_MS = 86_400_000;

export function decayRate(category: Category | null): number {
  return category === 'decision' || category === 'gotcha' ? SLOW_DECAY_RATE : DECAY_RATE;
}

/** When decay starts counting: the last reference, or the creation when never referenced. */
export function decayAnchor(entry: Pick<MemoryEntry, 'lastReferenced' | 'createdAt'>): string {
  return entry.lastReferenced ?? entry.createdAt;
}

/** Fractional days from `from` to `now`; never negative (a clock behind the log counts as zero). */
export function daysSince(from: string, now: Date): number {
  return Math.max(0, (now.getTime() - Date.parse(from)) / DAY_MS);
}

/** Whole UTC calendar days from `from` to `now`: what Tier 1 uses so the block changes at most daily. */
export function calendarDaysSince(from: string, now: Date): number {
  const start = Math.floor(Date.parse(from) / DAY_MS);
  const end = Math.floor(now.getTime() / DAY_MS);
  return Math.max(0, end - start);
}

/** confidence × rate^(days since last reference, or since creation). */
export function effectiveConfidence(
  entry: Pick<MemoryEntry, 'confidence' | 'category' | 'lastReferenced' | 'createdAt'>,
  now: Date,
  days: number = daysSince(decayAnchor(entry), now),
): number {
  return decayedConfidence(entry.confidence, entry.category, days);
}

/** The formula itself, for callers that already know the days (e.g. computed by SQLite). */
export function decayedConfidence(confidence: number, category: Category | null, days: number): number {
  return confidence * decayRate(category) ** Math.max(0, days);
}

/** True when decay has taken an active entry below the archive threshold. */
export function shouldArchive(
  entry: Pick<MemoryEntry, 'confidence' | 'category' | 'lastReferenced' | 'createdAt' | 'isArchived'>,
  now: Date,
): boolean {
  return !entry.isArchived && effectiveConfidence(entry, now) < ARCHIVE_THRESHOLD;
}
