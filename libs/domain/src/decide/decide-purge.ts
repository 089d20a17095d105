import type { MemoryEntry } from '../memory-entry.js';
import type { NewEvent } from '../events.js';
import { entryOfPool, newEvent, type WriteContext } from './write-command.js';

export interface PurgeCommand {
  readonly context: WriteContext;
  readonly id: string;
}

/** Forgets an entry for real, archived or not (the store then redacts the log lines that carried it). */
export function decidePurge(command: PurgeCommand, current: MemoryEntry | undefined): NewEvent[] {
  const entry = entryOfPool(command.context.pool, command.id, current);
  return [newEvent(command.context, 'memory.purged', { id: entry.id })];
}
