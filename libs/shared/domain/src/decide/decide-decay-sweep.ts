import { ARCHIVE_THRESHOLD, effectiveConfidence, shouldArchive } from '../decay.js';
import type { NewEvent } from '../events.js';
import type { MemoryEntry } from '../memory-entry.js';
import { newEvent, type WriteContext } from './write-command.js';

/** What the sweep reads of an entry: the decay rule's inputs, and which entry of which pool it is. */
export type DecayingEntry = Pick<MemoryEntry, 'id' | 'pool' | 'confidence' | 'category' | 'lastReferenced' | 'createdAt' | 'isArchived'>;

export interface DecaySweepCommand {
  readonly context: WriteContext;
  /** The time decay is evaluated at: the command's own, or one an operator or a test replays. */
  readonly asOf: Date;
}

export interface DecaySweepDecision {
  /** One memory.archived per decayed entry, to be written as one batch. */
  readonly events: NewEvent[];
  /** Active entries of the pool looked at. */
  readonly examined: number;
  /** The decayed entries' ids, in the order given. */
  readonly archived: string[];
}

/**
 * The decay sweep of one pool: every active entry that `shouldArchive` at `asOf` is archived
 * (restorably), with the effective confidence that decided it in the reason. Archived entries and
 * entries of other pools are left alone, so a second sweep at the same time decides nothing.
 */
export function decideDecaySweep(command: DecaySweepCommand, entries: Iterable<DecayingEntry>): DecaySweepDecision {
  const { context, asOf } = command;
  const events: NewEvent[] = [];
  const archived: string[] = [];
  let examined = 0;
  for (const entry of entries) {
    if (entry.pool !== context.pool || entry.isArchived) continue;
    examined += 1;
    if (!shouldArchive(entry, asOf)) continue;
    archived.push(entry.id);
    events.push(newEvent(context, 'memory.archived', { id: entry.id, reason: decayReason(entry, asOf) }));
  }
  return { events, examined, archived };
}

/** e.g. "decayed: effective confidence 0.215 < 0.3 at 2026-12-01T00:00:00.000Z". */
export function decayReason(entry: DecayingEntry, asOf: Date): string {
  return `decayed: effective confidence ${effectiveConfidence(entry, asOf).toFixed(3)} < ${ARCHIVE_THRESHOLD} at ${asOf.toISOString()}`;
}
