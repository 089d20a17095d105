import { EVENT_SCHEMA_VERSION, type Actor, type EventDataByType, type EventType, type NewEvent } from '../events.js';
import type { MemoryEntry } from '../memory-entry.js';

/**
 * What every write command carries once the store has checked the request: the pool and actor it
 * acts for, what caused it, the time it happens at, and where new event ids come from.
 */
export interface WriteContext {
  readonly pool: string;
  readonly actor: Actor;
  readonly causationId: string | null;
  /** ISO-8601 UTC: every event of the command carries this time. */
  readonly at: string;
  /** A fresh event id per call. */
  readonly newEventId: () => string;
}

/** Why a command cannot be carried out in the current state; the store answers it as an error with this code. */
export type RejectionCode = 'not_found' | 'conflict' | 'invalid_request' | 'gone';

/** A command refused by a write rule (not by the shape of the request, which the store checks first). */
export class WriteRejection extends Error {
  override name = 'WriteRejection';
  constructor(
    readonly code: RejectionCode,
    message: string,
  ) {
    super(message);
  }
}

/** The current version of entries a command names (acknowledged or about to be), undefined when there is none. */
export type EntryLookup = (id: string) => MemoryEntry | undefined;

/** The event a command appends, stamped with the command's context. */
export function newEvent<T extends EventType>(context: WriteContext, type: T, data: EventDataByType[T]): NewEvent {
  return {
    type,
    id: context.newEventId(),
    at: context.at,
    pool: context.pool,
    actor: context.actor,
    causationId: context.causationId,
    schemaVersion: EVENT_SCHEMA_VERSION,
    data,
  } as NewEvent;
}

/** The entry `id` of the command's pool; an entry of another pool is as absent as none. */
export function entryOfPool(pool: string, id: string, entry: MemoryEntry | undefined): MemoryEntry {
  if (!entry || entry.pool !== pool) throw new WriteRejection('not_found', `memory ${id} not found in pool ${pool}`);
  return entry;
}
