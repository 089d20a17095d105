import type { Tier1PlanResponse, Tier1Response } from '@engram/contracts';
import { DAY_MS, buildTier1, planTier1, type Tier1Reason } from '@engram/domain';
import type { MemoryQueries } from '../projection/memory-queries.js';

export interface Tier1BlocksDeps {
  readonly queries: Pick<MemoryQueries, 'poolSeq' | 'tier1Candidates' | 'activeEntries'>;
  readonly clock: () => Date;
  readonly maxChars: number;
}

/** A Tier 1 plan lists every included entry and at most this many left out for each reason (all are counted). */
const TIER1_PLAN_EXAMPLES = 100;

/**
 * Each pool's Tier 1 block, built once per pool state and UTC day: every request of a session
 * injects it, so it must be byte-identical while nothing changed (and cheap to answer).
 */
export class Tier1Blocks {
  private readonly blocks = new Map<string, { key: string; response: Tier1Response }>();

  constructor(private readonly deps: Tier1BlocksDeps) {}

  /** Byte-identical for the same pool state and UTC day (cached on both). `pool` is a valid pool name. */
  block(pool: string): Tier1Response {
    const now = this.deps.clock();
    const seq = this.deps.queries.poolSeq(pool);
    const key = `${seq}:${Math.floor(now.getTime() / DAY_MS)}`;
    const cached = this.blocks.get(pool);
    if (cached?.key === key) return cached.response;
    const { block, ids } = buildTier1(this.deps.queries.tier1Candidates(pool), { now, maxChars: this.deps.maxChars });
    const response: Tier1Response = { pool, block, ids, seq };
    this.blocks.set(pool, { key, response });
    return response;
  }

  /** The block exactly as `block` gives it, and why each active entry of the pool is or is not in it. */
  plan(pool: string): Tier1PlanResponse {
    const injected = this.block(pool);
    const plan = planTier1(this.deps.queries.activeEntries(pool), { now: this.deps.clock(), maxChars: this.deps.maxChars });
    const counts: Partial<Record<Tier1Reason, number>> = {};
    const entries = plan.decisions.filter((decision) => {
      counts[decision.reason] = (counts[decision.reason] ?? 0) + 1;
      return decision.reason === 'included' || (counts[decision.reason] ?? 0) <= TIER1_PLAN_EXAMPLES;
    });
    return { ...injected, maxChars: this.deps.maxChars, counts, entries };
  }
}
