import type { NewEvent } from '../events.js';
import { entryOfPool, newEvent, type EntryLookup, type WriteContext } from './write-command.js';

export interface RefreshCommand {
  readonly context: WriteContext;
  /** Non-empty; repeats count once. */
  readonly ids: readonly string[];
}

/**
 * The entries were used (quoted, relied on): one reference for all of them restarts their decay.
 * Every id must be an entry of the pool, archived or not.
 */
export function decideRefresh(command: RefreshCommand, current: EntryLookup): { readonly ids: string[]; readonly events: NewEvent[] } {
  const ids = [...new Set(command.ids.map((id) => entryOfPool(command.context.pool, id, current(id)).id))];
  return { ids, events: [newEvent(command.context, 'memory.referenced', { ids })] };
}

export interface RecordReferencesCommand {
  readonly context: WriteContext;
  /** What a search answered. */
  readonly ids: readonly string[];
}

/** A search's hits are referenced, those still in the pool (a purge since may have removed one); none left, nothing. */
export function decideRecordReferences(command: RecordReferencesCommand, inPool: ReadonlySet<string>): NewEvent[] {
  const ids = command.ids.filter((id) => inPool.has(id));
  return ids.length === 0 ? [] : [newEvent(command.context, 'memory.referenced', { ids })];
}
