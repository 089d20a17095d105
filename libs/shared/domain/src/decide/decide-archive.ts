import type { MemoryEntry } from '../memory-entry.js';
import type { NewEvent } from '../events.js';
import { entryOfPool, newEvent, type WriteContext } from './write-command.js';

export interface ArchiveCommand {
  readonly context: WriteContext;
  readonly id: string;
  /** Why, e.g. the decay sweep's "decayed: effective confidence … < …"; null: "archived". */
  readonly reason: string | null;
}

/**
 * Takes an entry out of the active set, restorably: asked by a person, or by the decay sweep
 * once its effective confidence fell below the threshold. An archived entry stays as it is.
 */
export function decideArchive(command: ArchiveCommand, current: MemoryEntry | undefined): NewEvent[] {
  const entry = entryOfPool(command.context.pool, command.id, current);
  if (entry.isArchived) return [];
  return [newEvent(command.context, 'memory.archived', { id: entry.id, reason: command.reason ?? 'archived' })];
}

export interface DeleteCommand {
  readonly context: WriteContext;
  readonly id: string;
  readonly reason: string | null;
}

/** A delete archives too (the log keeps everything; purge forgets for real); an archived entry stays as it is. */
export function decideDelete(command: DeleteCommand, current: MemoryEntry | undefined): NewEvent[] {
  const entry = entryOfPool(command.context.pool, command.id, current);
  if (entry.isArchived) return [];
  return [newEvent(command.context, 'memory.deleted', { id: entry.id, reason: command.reason })];
}

export interface RestoreCommand {
  readonly context: WriteContext;
  readonly id: string;
}

/** Brings an archived (or deleted, or superseded) entry back; an active one stays as it is. */
export function decideRestore(command: RestoreCommand, current: MemoryEntry | undefined): NewEvent[] {
  const entry = entryOfPool(command.context.pool, command.id, current);
  if (!entry.isArchived) return [];
  return [newEvent(command.context, 'memory.restored', { id: entry.id })];
}
