import { ARCHIVE_THRESHOLD, DAY_MS, calendarDaysSince, decayAnchor, effectiveConfidence } from './decay.js';
import type { MemoryEntry } from './memory-entry.js';

/** environment/project entries reach Tier 1 only when referenced within this many days... */
export const TIER1_RECENT_DAYS = 7;
/** ...and when at least this confident. */
export const TIER1_MIN_CONFIDENCE = 0.6;

export const TIER1_OPEN = '<engram-memory>';
export const TIER1_CLOSE = '</engram-memory>';
export const TIER1_NOTE = 'These facts are already in your context. Use memory_search only for facts not listed here.';

export interface Tier1Options {
  readonly now: Date;
  /** Budget of the whole block, delimiters and note included. */
  readonly maxChars: number;
}

export interface Tier1Block {
  /** Empty string when nothing qualifies or nothing fits. */
  readonly block: string;
  readonly ids: readonly string[];
}

interface Candidate {
  readonly entry: MemoryEntry;
  readonly confidence: number;
  readonly always: boolean;
}

/**
 * The curated block injected into every prompt. Deterministic for prompt caching: time enters only
 * as whole UTC days and confidence only rounded to one decimal, ties are broken by creation and id,
 * so the same memory state on the same day gives the same bytes.
 */
export function buildTier1(entries: Iterable<MemoryEntry>, options: Tier1Options): Tier1Block {
  const today = new Date(Math.floor(options.now.getTime() / DAY_MS) * DAY_MS);
  const candidates: Candidate[] = [];
  for (const entry of entries) {
    const candidate = toCandidate(entry, today);
    if (candidate) candidates.push(candidate);
  }
  candidates.sort(byPriority);

  const frame = `${TIER1_OPEN}\n${TIER1_NOTE}\n${TIER1_CLOSE}`;
  let used = frame.length;
  const lines: string[] = [];
  const ids: string[] = [];
  for (const candidate of candidates) {
    const line = renderLine(candidate);
    if (used + line.length + 1 > options.maxChars) continue;
    used += line.length + 1;
    lines.push(line);
    ids.push(candidate.entry.id);
  }
  if (lines.length === 0) return { block: '', ids: [] };
  return { block: `${TIER1_OPEN}\n${TIER1_NOTE}\n${lines.join('\n')}\n${TIER1_CLOSE}`, ids };
}

function toCandidate(entry: MemoryEntry, today: Date): Candidate | undefined {
  if (entry.isArchived) return undefined;
  if (entry.category === 'decision' || entry.category === 'gotcha') return undefined;
  const days = calendarDaysSince(decayAnchor(entry), today);
  const confidence = Math.round(effectiveConfidence(entry, today, days) * 10) / 10;
  if (confidence < ARCHIVE_THRESHOLD) return undefined;
  const always = entry.type === 'USER' || entry.category === 'preference' || entry.category === 'person';
  if (always) return { entry, confidence, always };
  if (entry.category !== 'environment' && entry.category !== 'project') return undefined;
  const recent = entry.lastReferenced !== null && calendarDaysSince(entry.lastReferenced, today) <= TIER1_RECENT_DAYS;
  return recent && confidence >= TIER1_MIN_CONFIDENCE ? { entry, confidence, always } : undefined;
}

function byPriority(a: Candidate, b: Candidate): number {
  if (a.always !== b.always) return a.always ? -1 : 1;
  if (a.confidence !== b.confidence) return b.confidence - a.confidence;
  if (a.entry.createdAt !== b.entry.createdAt) return a.entry.createdAt < b.entry.createdAt ? -1 : 1;
  return a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0;
}

function renderLine({ entry, confidence }: Candidate): string {
  const content = entry.content
    .replace(/<\/?engram-memory>/gi, '')
    .replace(/\s+/g, ' ')
    .trim();
  return `- [id:${entry.id}] ${content} (${entry.category ?? entry.type.toLowerCase()}, ${confidence.toFixed(1)})`;
}
