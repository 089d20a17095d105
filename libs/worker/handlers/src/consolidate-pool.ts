import { MemoryPattern } from '@engram/contracts';
import type { MemoryEntry } from '@engram/domain';
import type { ConsolidatePoolData } from '@engram/jobs';
import { consolidationMessages, validatePlan, type ConsolidationPlan } from './consolidation-plan.js';
import { deterministicPlan } from './deterministic-merge.js';
import { LIST_LIMIT, type LlmPort, type MemoryPort } from './ports.js';

/** The model name recorded on merges made without a model. */
export const DETERMINISTIC_MODEL = 'deterministic';

export interface ConsolidateSettings {
  /** `off`: deterministic merge only. */
  readonly model: string;
  readonly threshold: number;
}

export interface ConsolidateOutcome {
  readonly outcome: 'consolidated' | 'already-applied' | 'below-threshold' | 'nothing-to-merge';
  readonly planner: string;
  readonly before: number;
  readonly after: number;
  readonly created: readonly string[];
  readonly archived: readonly string[];
  /** Why the model's plans were refused, when they were. */
  readonly refused: readonly string[];
}

export interface ConsolidateDeps {
  readonly memory: MemoryPort;
  /** Null when no upstream is configured. */
  readonly llm: LlmPort | null;
  readonly settings: ConsolidateSettings;
}

const EVENTS_PAGE = 500;

/** Did an earlier delivery of this job already apply its merges? (The log says so: causation = the job's event.) */
async function alreadyApplied(memory: MemoryPort, data: ConsolidatePoolData): Promise<boolean> {
  let after = data.seq;
  for (;;) {
    const events = await memory.call(MemoryPattern.EventsAfter, { after, pool: data.pool, limit: EVENTS_PAGE });
    if (events.some((event) => event.type === 'memory.consolidated' && event.causationId === data.eventId)) return true;
    const last = events.at(-1);
    if (!last || events.length < EVENTS_PAGE) return false;
    after = last.seq;
  }
}

/** Asks the model for a plan; a refused answer gets one retry with the reason, then null. */
async function modelPlan(llm: LlmPort, model: string, entries: readonly MemoryEntry[], refused: string[]): Promise<ConsolidationPlan | null> {
  const messages = consolidationMessages(entries);
  for (let attempt = 1; attempt <= 2; attempt++) {
    let answer: string;
    try {
      answer = await llm.complete({ model, messages, json: true });
    } catch (error) {
      refused.push(`attempt ${attempt}: upstream failed: ${(error as Error).message}`);
      continue;
    }
    const verdict = validatePlan(answer, entries);
    if (verdict.ok) return verdict.plan;
    refused.push(`attempt ${attempt}: ${verdict.problem}`);
    messages.push(
      { role: 'assistant', content: answer },
      { role: 'user', content: `That plan was refused: ${verdict.problem}. Answer again with the complete JSON plan.` },
    );
  }
  return null;
}

/**
 * Consolidates a pool that passed the threshold: one model call for a plan (validated; one retry;
 * then the deterministic near-duplicate merge), applied as one Consolidate write. Nothing is
 * deleted: superseded entries are archived and recorded on the merged entry.
 */
export async function consolidatePool(deps: ConsolidateDeps, data: ConsolidatePoolData): Promise<ConsolidateOutcome> {
  const { memory, llm, settings } = deps;
  const idle = (outcome: ConsolidateOutcome['outcome'], before: number, planner = 'none'): ConsolidateOutcome => ({
    outcome,
    planner,
    before,
    after: before,
    created: [],
    archived: [],
    refused: [],
  });

  if (await alreadyApplied(memory, data)) return idle('already-applied', 0);
  const entries = (await memory.call(MemoryPattern.List, { pool: data.pool, archived: false, limit: LIST_LIMIT })).filter(
    (entry) => !entry.isArchived,
  );
  if (entries.length <= settings.threshold) return idle('below-threshold', entries.length);

  const refused: string[] = [];
  const useModel = llm !== null && settings.model !== 'off';
  const fromModel = useModel ? await modelPlan(llm, settings.model, entries, refused) : null;
  const plan = fromModel ?? deterministicPlan(entries);
  const planner = fromModel ? settings.model : DETERMINISTIC_MODEL;
  if (plan.merges.length === 0) return { ...idle('nothing-to-merge', entries.length, planner), refused };

  const result = await memory.call(MemoryPattern.Consolidate, {
    pool: data.pool,
    model: planner,
    merges: plan.merges.map((merge) => ({ ...merge, supersedes: [...merge.supersedes] })),
    actor: 'worker:consolidate',
    causationId: data.eventId,
  });
  return {
    outcome: 'consolidated',
    planner,
    before: entries.length,
    after: entries.length - result.archived.length + result.created.length,
    created: result.created.map((entry) => entry.id),
    archived: result.archived,
    refused,
  };
}
