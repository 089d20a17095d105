import type { MemoryEntry } from '../memory-entry.js';
import type { NewEvent } from '../events.js';
import { entryOfPool, newEvent, type WriteContext } from './write-command.js';

export interface PurgeCommand {
  readonly context: WriteContext;
  readonly id: string;
  /** Fingerprints of every text the entry had, which the purge forbids from then on (see MemoryPurgedData). */
  readonly forbids: readonly string[];
}

/**
 * Forgets an entry for real, archived or not (the store then redacts the log lines that carried it),
 * and records what it forbids: the id, never stored again, and the entry's texts, never stored again
 * from a conversation (see decideStore).
 */
export function decidePurge(command: PurgeCommand, current: MemoryEntry | undefined): NewEvent[] {
  const entry = entryOfPool(command.context.pool, command.id, current);
  const forbids = [...new Set(command.forbids)];
  return [newEvent(command.context, 'memory.purged', { id: entry.id, ...(forbids.length > 0 ? { forbids } : {}) })];
}
