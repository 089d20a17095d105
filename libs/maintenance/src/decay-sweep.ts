import { MemoryPattern } from '@engram/contracts';
import { ARCHIVE_THRESHOLD, effectiveConfidence } from '@engram/domain';
import type { DecaySweepData } from '@engram/jobs';
import { isAlreadySettled } from './memory-errors.js';
import { listAllActive } from './list-all.js';
import type { Clock, JobContext, MemoryPort } from './ports.js';

export interface DecayOutcome {
  readonly asOf: string;
  readonly pools: number;
  readonly examined: number;
  readonly archived: readonly string[];
}

/**
 * Archives every active entry whose effective confidence (derived, per DESIGN) has fallen below the
 * threshold at `asOf` (or now). Archived entries stay in the database and the log, restorable.
 * Idempotent: a second run finds them archived and has nothing to do.
 */
export async function decaySweep(memory: MemoryPort, clock: Clock, data: DecaySweepData, context: JobContext): Promise<DecayOutcome> {
  const now = data.asOf === undefined ? clock.now() : new Date(data.asOf);
  if (Number.isNaN(now.getTime())) throw new Error(`decay sweep: asOf is not a time: ${data.asOf}`);
  const pools =
    data.pool === undefined
      ? (await memory.call(MemoryPattern.Stats, {})).pools.filter((pool) => pool.active > 0).map((pool) => pool.pool)
      : [data.pool];

  let examined = 0;
  const archived: string[] = [];
  for (const pool of pools) {
    const entries = await listAllActive(memory, pool);
    for (const entry of entries) {
      if (entry.isArchived) continue;
      examined++;
      const effective = effectiveConfidence(entry, now);
      if (effective >= ARCHIVE_THRESHOLD) continue;
      try {
        await memory.call(MemoryPattern.Archive, {
          pool,
          id: entry.id,
          reason: `decayed: effective confidence ${effective.toFixed(3)} < ${ARCHIVE_THRESHOLD} at ${now.toISOString()}`,
          actor: 'worker:decay',
          causationId: context.jobId,
        });
        archived.push(entry.id);
      } catch (error) {
        if (!isAlreadySettled(error)) throw error;
      }
    }
  }
  return { asOf: now.toISOString(), pools: pools.length, examined, archived };
}
