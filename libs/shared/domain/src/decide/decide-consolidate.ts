import { effectiveConfidence } from '../decay.js';
import type { NewEvent } from '../events.js';
import type { Category, MemoryEntry, MemoryType } from '../memory-entry.js';
import { WriteRejection, entryOfPool, newEvent, type EntryLookup, type WriteContext } from './write-command.js';

export interface Merge {
  readonly content: string;
  readonly type: MemoryType;
  readonly category: Category | null;
  /** Non-empty. */
  readonly supersedes: readonly string[];
  /** An unused id for the merged entry. */
  readonly id: string;
}

export interface ConsolidateCommand {
  readonly context: WriteContext;
  /** The model that wrote the merges (recorded on each event). */
  readonly model: string;
  readonly merges: readonly Merge[];
}

export interface ConsolidateDecision {
  readonly events: NewEvent[];
  /** The merged entries' ids, one per merge. */
  readonly created: string[];
  /** Every superseded id, each once. */
  readonly archived: string[];
}

/**
 * Replaces groups of active entries by one merged entry each; the superseded entries are archived,
 * never deleted. An entry may be superseded by one merge only, and only while active. The merged
 * entry starts as confident as the most confident entry it replaces is at the command's time.
 */
export function decideConsolidate(command: ConsolidateCommand, current: EntryLookup): ConsolidateDecision {
  const { context } = command;
  const now = new Date(context.at);
  const seen = new Set<string>();
  const events = command.merges.map((merge) => {
    const superseded = merge.supersedes.map((id) => {
      const entry = entryOfPool(context.pool, id, current(id));
      if (entry.isArchived) throw new WriteRejection('invalid_request', `memory ${id} is archived and cannot be consolidated`);
      if (seen.has(entry.id)) throw new WriteRejection('invalid_request', `memory ${id} appears in more than one merge`);
      seen.add(entry.id);
      return entry;
    });
    return newEvent(context, 'memory.consolidated', {
      id: merge.id,
      type: merge.type,
      category: merge.category,
      content: merge.content,
      confidence: startingConfidence(superseded, now),
      supersedes: superseded.map((entry) => entry.id),
      model: command.model,
    });
  });
  return { events, created: command.merges.map((merge) => merge.id), archived: [...seen] };
}

function startingConfidence(superseded: readonly MemoryEntry[], now: Date): number {
  return Math.round(Math.max(...superseded.map((entry) => effectiveConfidence(entry, now))) * 10_000) / 10_000;
}
