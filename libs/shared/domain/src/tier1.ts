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

/**
 * Why an entry is or is not in the block: `included`; `budget` (qualified, but the block was full);
 * `category` (decision, gotcha, or a MEMORY without a Tier 1 category); `decayed` (effective
 * confidence below the archive line, or an environment/project entry below TIER1_MIN_CONFIDENCE);
 * `not_recent` (environment/project not referenced within TIER1_RECENT_DAYS); `archived`.
 */
export type Tier1Reason = 'included' | 'budget' | 'category' | 'decayed' | 'not_recent' | 'archived';

export interface Tier1Decision {
  readonly entry: MemoryEntry;
  readonly reason: Tier1Reason;
  /** Effective confidence as the block shows it (rounded to one decimal, whole days). */
  readonly confidence: number;
  /** The line the entry has (or would have) in the block; null when it never qualified. */
  readonly line: string | null;
}

export interface Tier1Plan extends Tier1Block {
  /** Every given entry: first those that qualified in block order, then the others in the given order. */
  readonly decisions: readonly Tier1Decision[];
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
  const { block, ids } = planTier1(entries, options);
  return { block, ids };
}

/** buildTier1 with the reason for every entry, so a person can see why a fact is or is not in the prompt. */
export function planTier1(entries: Iterable<MemoryEntry>, options: Tier1Options): Tier1Plan {
  const today = new Date(Math.floor(options.now.getTime() / DAY_MS) * DAY_MS);
  const candidates: Candidate[] = [];
  const excluded: Tier1Decision[] = [];
  for (const entry of entries) {
    const judged = judge(entry, today);
    if ('reason' in judged) excluded.push(judged);
    else candidates.push(judged);
  }
  candidates.sort(byPriority);

  const frame = `${TIER1_OPEN}\n${TIER1_NOTE}\n${TIER1_CLOSE}`;
  let used = frame.length;
  const lines: string[] = [];
  const ids: string[] = [];
  const qualified: Tier1Decision[] = [];
  for (const candidate of candidates) {
    const line = renderLine(candidate);
    const fits = used + line.length + 1 <= options.maxChars;
    qualified.push({ entry: candidate.entry, reason: fits ? 'included' : 'budget', confidence: candidate.confidence, line });
    if (!fits) continue;
    used += line.length + 1;
    lines.push(line);
    ids.push(candidate.entry.id);
  }
  const decisions = [...qualified, ...excluded];
  if (lines.length === 0) return { block: '', ids: [], decisions };
  return { block: `${TIER1_OPEN}\n${TIER1_NOTE}\n${lines.join('\n')}\n${TIER1_CLOSE}`, ids, decisions };
}

function judge(entry: MemoryEntry, today: Date): Candidate | Tier1Decision {
  const days = calendarDaysSince(decayAnchor(entry), today);
  const confidence = Math.round(effectiveConfidence(entry, today, days) * 10) / 10;
  const out = (reason: Tier1Reason): Tier1Decision => ({ entry, reason, confidence, line: null });
  if (entry.isArchived) return out('archived');
  if (entry.category === 'decision' || entry.category === 'gotcha') return out('category');
  const always = entry.type === 'USER' || entry.category === 'preference' || entry.category === 'person';
  if (!always && entry.category !== 'environment' && entry.category !== 'project') return out('category');
  if (confidence < ARCHIVE_THRESHOLD) return out('decayed');
  if (always) return { entry, confidence, always };
  const recent = entry.lastReferenced !== null && calendarDaysSince(entry.lastReferenced, today) <= TIER1_RECENT_DAYS;
  if (!recent) return out('not_recent');
  return confidence >= TIER1_MIN_CONFIDENCE ? { entry, confidence, always } : out('decayed');
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
