import { EVENT_SCHEMA_VERSION, type EventDataByType, type EventType, type MemoryEvent, type NewEvent } from '../events.js';
import { replayEvents } from '../evolve.js';
import type { MemoryEntry } from '../memory-entry.js';
import type { EntryLookup, WriteContext } from './write-command.js';

/** Given/when/then for the deciders: state comes from events (as the store's does), commands from `context()`. */

export const AT = '2026-03-01T12:00:00.000Z';
const GIVEN_AT = '2026-01-01T00:00:00.000Z';

/** A command's context in pool `p` by the user at AT; event ids are `n1`, `n2`, … per context. */
export function context(overrides: Partial<Omit<WriteContext, 'newEventId'>> = {}): WriteContext {
  let next = 0;
  return { pool: 'p', actor: 'user', causationId: 'req-1', at: AT, newEventId: () => `n${++next}`, ...overrides };
}

let givenSeq = 0;
/** A past event of pool `p` (or `pool`), numbered in order. */
export function past<T extends EventType>(type: T, data: EventDataByType[T], options: { pool?: string; at?: string } = {}): MemoryEvent {
  givenSeq += 1;
  return {
    type,
    data,
    seq: givenSeq,
    id: `g${givenSeq}`,
    at: options.at ?? GIVEN_AT,
    pool: options.pool ?? 'p',
    actor: 'llm',
    causationId: null,
    schemaVersion: EVENT_SCHEMA_VERSION,
  } as MemoryEvent;
}

export function stored(id: string, options: { pool?: string; at?: string; confidence?: number; content?: string } = {}): MemoryEvent {
  return past(
    'memory.stored',
    { id, type: 'MEMORY', category: 'project', content: options.content ?? `fact ${id}`, confidence: options.confidence ?? 1, source: 'llm' },
    options,
  );
}

/** The entries the events leave; `entry(id)` and `lookup` read them. */
export function given(...events: MemoryEvent[]): { readonly entry: (id: string) => MemoryEntry | undefined; readonly lookup: EntryLookup } {
  const { entries } = replayEvents([...events].sort((a, b) => a.seq - b.seq));
  const entry = (id: string) => entries.get(id);
  return { entry, lookup: entry };
}

/** The event a command of `context()` is expected to append as its `n`th. */
export function expected<T extends EventType>(type: T, data: EventDataByType[T], n = 1, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    type,
    data,
    id: `n${n}`,
    at: AT,
    pool: 'p',
    actor: 'user',
    causationId: 'req-1',
    schemaVersion: EVENT_SCHEMA_VERSION,
    ...overrides,
  } as NewEvent;
}
