import { EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';

/** A `memory.stored` event of pool `p`, numbered `seq`, storing entry `m<seq>`. */
export function storedEvent(seq: number, content = `fact number ${seq}`): MemoryEvent {
  return {
    seq,
    type: 'memory.stored',
    id: `e${seq}`,
    at: '2026-01-01T00:00:00.000Z',
    pool: 'p',
    actor: 'user',
    causationId: null,
    schemaVersion: EVENT_SCHEMA_VERSION,
    data: { id: `m${seq}`, type: 'MEMORY', category: null, content, confidence: 1, source: 'user' },
  };
}
