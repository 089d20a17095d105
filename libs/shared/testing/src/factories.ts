import {
  EVENT_SCHEMA_VERSION,
  type EventDataByType,
  type EventType,
  type MemoryEntry,
  type MemoryEvent,
  type MemoryStoredData,
} from '@engram/domain';

const AT = '2026-01-01T00:00:00.000Z';

/** An active, unreferenced entry `id` of pool `p`; `overrides` set the fields a test is about. */
export function memoryEntry(id: string, overrides: Partial<MemoryEntry> = {}): MemoryEntry {
  return {
    id,
    pool: 'p',
    type: 'MEMORY',
    category: null,
    content: `fact ${id}`,
    confidence: 1,
    createdAt: AT,
    updatedAt: AT,
    lastReferenced: null,
    referenceCount: 0,
    isConfirmed: false,
    isArchived: false,
    source: 'llm',
    supersededBy: null,
    supersedes: [],
    ...overrides,
  };
}

/** A committed event of pool `p` numbered `seq` (id `e<seq>`); `overrides` set pool, actor, time. */
export function memoryEvent<T extends EventType>(
  seq: number,
  type: T,
  data: EventDataByType[T],
  overrides: Partial<Omit<MemoryEvent, 'type' | 'data' | 'seq'>> = {},
): MemoryEvent {
  return {
    seq,
    type,
    data,
    id: `e${seq}`,
    at: AT,
    pool: 'p',
    actor: 'user',
    causationId: null,
    schemaVersion: EVENT_SCHEMA_VERSION,
    ...overrides,
  } as MemoryEvent;
}

/** A `memory.stored` event numbered `seq` storing entry `m<seq>`; `data` and `overrides` as the test needs. */
export function storedEvent(
  seq: number,
  data: Partial<MemoryStoredData> = {},
  overrides: Partial<Omit<MemoryEvent, 'type' | 'data' | 'seq'>> = {},
): MemoryEvent {
  return memoryEvent(
    seq,
    'memory.stored',
    { id: `m${seq}`, type: 'MEMORY', category: null, content: `fact number ${seq}`, confidence: 1, source: 'user', ...data },
    overrides,
  );
}
