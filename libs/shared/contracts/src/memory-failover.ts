import { MemoryPattern, type MemoryPatternName } from './memory-pattern.js';

/**
 * Calls that change nothing, or whose second run changes nothing more than the first: a search's
 * recorded reference counts one use twice at worst, vectors are stored under their text's hash, a
 * spooled exchange under its exchange id (and its job id dedupes the enqueue).
 */
const REPEATABLE: ReadonlySet<MemoryPatternName> = new Set([
  MemoryPattern.Search,
  MemoryPattern.List,
  MemoryPattern.Page,
  MemoryPattern.Get,
  MemoryPattern.Tier1,
  MemoryPattern.Tier1Plan,
  MemoryPattern.Stats,
  MemoryPattern.EventsAfter,
  MemoryPattern.Events,
  MemoryPattern.Ping,
  MemoryPattern.VectorsMissing,
  MemoryPattern.StoreVectors,
  MemoryPattern.SpoolExtraction,
]);

/**
 * Whether a call whose connection broke after it was sent may be sent to another replica: the first
 * replica may have done it. Reads may; a store only with its own id or an idempotency key, since the
 * second replica then answers the entry the first one stored instead of storing another. Every other
 * write (update, delete, archive, refresh, consolidate, ...) is refused to the caller as unavailable:
 * done twice it could record the change twice or answer a conflict for what succeeded.
 */
export function repeatableAfterBrokenCall(pattern: string, request: unknown): boolean {
  if (REPEATABLE.has(pattern as MemoryPatternName)) return true;
  if (pattern !== MemoryPattern.Store || typeof request !== 'object' || request === null) return false;
  const { id, idempotencyKey } = request as { id?: unknown; idempotencyKey?: unknown };
  return (typeof id === 'string' && id !== '') || (typeof idempotencyKey === 'string' && idempotencyKey !== '');
}

/**
 * How a call to one replica failed. `not-sent`: the connection was never made (refused, no such
 * host), so any call may go to another replica. `broken`: the connection closed or reset with the
 * call on it, which the replica may or may not have done. `timeout`: the replica did not answer in
 * time (it may still be working on it: never sent elsewhere). `answered`: the replica answered an error.
 */
export type CallFailure = 'not-sent' | 'broken' | 'timeout' | 'answered';

const NOT_SENT = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL/;
const BROKEN = /ECONNRESET|EPIPE|ECONNABORTED|closed|socket hang up|has been ended/i;

/** Sorts a transport error the RPC client raised (not an error body the service answered). */
export function transportFailureOf(error: unknown): Exclude<CallFailure, 'answered' | 'timeout'> | null {
  const text = error instanceof Error ? `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` : JSON.stringify(error);
  if (NOT_SENT.test(text)) return 'not-sent';
  if (BROKEN.test(text)) return 'broken';
  return null;
}
