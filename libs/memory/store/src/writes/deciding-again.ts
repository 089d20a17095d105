import { MemoryError } from '@engram/contracts';
import { VersionConflict } from '../event-log/postgres/version-conflict.js';

/** Attempts of a command whose pool other replicas keep writing to, before it is answered unavailable. */
export const DECIDE_ATTEMPTS = 12;

/**
 * Runs a command (decide against the current state, then write) and, when another memory replica
 * wrote to the pool in between (VersionConflict: nothing was stored, this replica has caught up),
 * runs it again on the new state, after a short random pause so that two replicas do not collide
 * again in step. Bounded: past DECIDE_ATTEMPTS the caller is answered unavailable, never an internal error.
 */
export async function decidingAgain<T>(command: () => Promise<T>, attempts = DECIDE_ATTEMPTS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await command();
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      if (attempt >= attempts) {
        throw new MemoryError('unavailable', `other memory replicas kept writing to ${error.pools.join(', ')}: nothing was stored; retry`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }
}
