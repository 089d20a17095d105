import { createHash } from 'node:crypto';
import { invalid } from './validation.js';

/** Printable ASCII, as HTTP header values are; long enough for a UUID, a ULID or a tool call id plus context. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The entry id a store with an idempotency key gets: derived from the pool and the key, so a retry
 * names the same id and the service returns the entry the first attempt stored (or waits for it if
 * it is still in flight) instead of storing a second one. The id is in the stored event, so the key
 * is remembered by the log itself and survives a replay, with no table of keys to keep or expire.
 */
export function idempotentMemoryId(pool: string, key: unknown): string {
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw invalid('idempotencyKey must be 1-255 printable ASCII characters without spaces');
  }
  return `idem-${createHash('sha256').update(`${pool}\n${key}`).digest('hex').slice(0, 20)}`;
}
