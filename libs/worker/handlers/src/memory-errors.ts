import { MemoryError } from '@engram/contracts';

/**
 * A write refused because the target is gone or already in the wanted state: what a re-delivered
 * job sees for the work its earlier run finished. Treated as done, not as a failure.
 */
export function isAlreadySettled(error: unknown): boolean {
  return error instanceof MemoryError && (error.code === 'not_found' || error.code === 'conflict');
}
