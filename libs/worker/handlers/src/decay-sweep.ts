import { MemoryPattern } from '@engram/contracts';
import type { DecaySweepData } from '@engram/jobs';
import type { Clock, JobContext, MemoryPort } from './ports.js';

export interface DecayOutcome {
  readonly asOf: string;
  readonly pools: number;
  readonly examined: number;
  readonly archived: readonly string[];
}

/**
 * Sweeps decayed entries into the archive at `asOf` (or now), pool by pool: each pool is one
 * command to the memory service, which decides with the domain's decay rule and writes the pool's
 * archive events together. Archived entries stay in the database and the log, restorable.
 * Idempotent: a second run finds them archived and has nothing to do.
 */
export async function decaySweep(memory: MemoryPort, clock: Clock, data: DecaySweepData, context: JobContext): Promise<DecayOutcome> {
  const now = data.asOf === undefined ? clock.now() : new Date(data.asOf);
  if (Number.isNaN(now.getTime())) throw new Error(`decay sweep: asOf is not a time: ${data.asOf}`);
  const asOf = now.toISOString();
  const pools =
    data.pool === undefined
      ? (await memory.call(MemoryPattern.Stats, {})).pools.filter((pool) => pool.active > 0).map((pool) => pool.pool)
      : [data.pool];

  let examined = 0;
  const archived: string[] = [];
  for (const pool of pools) {
    const swept = await memory.call(MemoryPattern.DecaySweep, { pool, asOf, actor: 'worker:decay', causationId: context.jobId });
    examined += swept.examined;
    archived.push(...swept.archived);
  }
  return { asOf, pools: pools.length, examined, archived };
}
