import { MemoryError, memoryFields } from '@engram/contracts';

/**
 * What the store answers a caller's mistake with. The shape of a request is its schema's
 * (parseMemoryRequest, in @engram/contracts); what is left here is what only the store can judge.
 */

export function invalid(message: string): MemoryError {
  return new MemoryError('invalid_request', message);
}

/** A pool name given outside a request (the CLI's argument, a spool file's name). */
export function validPool(pool: unknown): string {
  const parsed = memoryFields.pool.safeParse(pool);
  if (!parsed.success) throw invalid(parsed.error.issues[0]?.message ?? 'invalid pool name');
  return parsed.data;
}

export function notFound(pool: string, id: string): MemoryError {
  return new MemoryError('not_found', `memory ${id} not found in pool ${pool}`);
}
