import type { Category, MemoryEntry, MemoryType } from '../memory-entry.js';
import type { NewEvent } from '../events.js';
import { entryOfPool, newEvent, type WriteContext } from './write-command.js';

export interface UpdateCommand {
  readonly context: WriteContext;
  readonly id: string;
  /** Absent fields are left as they are. */
  readonly content?: string;
  readonly category?: Category | null;
  readonly type?: MemoryType;
  readonly confirmed?: boolean;
}

/** An edit by a person or the model: one event for what it says (only the fields that differ), one for the flag. */
export function decideUpdate(command: UpdateCommand, current: MemoryEntry | undefined): NewEvent[] {
  const { context } = command;
  const entry = entryOfPool(context.pool, command.id, current);
  const changed = {
    ...(command.content !== undefined && command.content !== entry.content ? { content: command.content } : {}),
    ...(command.category !== undefined && command.category !== entry.category ? { category: command.category } : {}),
    ...(command.type !== undefined && command.type !== entry.type ? { type: command.type } : {}),
  };
  const events: NewEvent[] = [];
  if (Object.keys(changed).length > 0) events.push(newEvent(context, 'memory.updated', { id: entry.id, ...changed }));
  events.push(...decideConfirm({ context, id: entry.id, confirmed: command.confirmed }, entry));
  return events;
}

export interface ConfirmCommand {
  readonly context: WriteContext;
  readonly id: string;
  /** Undefined: no change asked for. */
  readonly confirmed: boolean | undefined;
}

/** A person vouches for an entry (or withdraws it); asking for the flag it already has changes nothing. */
export function decideConfirm(command: ConfirmCommand, current: MemoryEntry | undefined): NewEvent[] {
  const entry = entryOfPool(command.context.pool, command.id, current);
  if (command.confirmed === undefined || command.confirmed === entry.isConfirmed) return [];
  return [newEvent(command.context, 'memory.confirmed', { id: entry.id, confirmed: command.confirmed })];
}

export interface CategorizeCommand {
  readonly context: WriteContext;
  readonly id: string;
  readonly category: Category;
}

/** The categorizer (or a person) files an entry; filing it where it already is changes nothing. */
export function decideCategorize(command: CategorizeCommand, current: MemoryEntry | undefined): NewEvent[] {
  const entry = entryOfPool(command.context.pool, command.id, current);
  if (entry.category === command.category) return [];
  return [newEvent(command.context, 'memory.categorized', { id: entry.id, category: command.category })];
}
