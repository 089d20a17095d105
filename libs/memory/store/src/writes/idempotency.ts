import { createHash } from 'node:crypto';
import { MemoryError } from '@engram/contracts';
import type { MemoryEvent } from '@engram/domain';

/**
 * The entry id a store with an idempotency key gets: derived from the pool and the key, so a retry
 * names the same id and the service returns the entry the first attempt stored (or waits for it if
 * it is still in flight) instead of storing a second one. The id is in the stored event, so the key
 * is remembered by the log itself and survives a replay, with no table of keys to keep or expire.
 */
export function idempotentMemoryId(pool: string, key: string): string {
  return `idem-${createHash('sha256').update(`${pool}\n${key}`).digest('hex').slice(0, 20)}`;
}

export interface StoredFields {
  readonly content: string;
  readonly type: string;
  readonly category: string | null;
}

/**
 * A key bound to its request (the REST `Idempotency-Key`) answers a retry only when it asks for the
 * same store. The first request is the entry's `memory.stored` event (or, while it is in flight, the
 * entry it is making), so the log remembers it beside the key: later edits of the entry do not count.
 */
export function assertSameStore(first: StoredFields | undefined, retry: StoredFields): void {
  if (first === undefined) return;
  if (first.content === retry.content && first.type === retry.type && first.category === retry.category) return;
  throw new MemoryError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request; use a new key for a new memory');
}

/** What a `memory.stored` event stored (undefined for any other event). */
export function storedFields(event: MemoryEvent | undefined): StoredFields | undefined {
  return event?.type === 'memory.stored' ? event.data : undefined;
}
