import { CATEGORIES, CONTENT_MAX_CHARS, MEMORY_TYPES, type Category, type MemoryEntry, type MemoryType } from '@engram/domain';
import { z } from 'zod';
import type { ChatMessage } from './ports.js';

/** One new entry replacing two or more; the replaced ones are archived and stay reachable from it. */
export interface PlannedMerge {
  readonly supersedes: readonly string[];
  readonly content: string;
  readonly type: MemoryType;
  readonly category: Category | null;
}

export interface ConsolidationPlan {
  readonly merges: readonly PlannedMerge[];
  readonly keep: readonly string[];
}

const PlanSchema = z.object({
  merges: z.array(
    z.object({
      supersedes: z.array(z.string().min(1)).min(2),
      content: z.string().trim().min(1).max(CONTENT_MAX_CHARS),
      type: z.enum(MEMORY_TYPES),
      // A merge without a category is still a sound merge; the categorizer can classify it later.
      category: z.enum(CATEGORIES).nullable().default(null),
    }),
  ),
  keep: z.array(z.string().min(1)),
});

export const CONSOLIDATION_SYSTEM_PROMPT = [
  'You maintain the long-term memory of an AI assistant. Merge related facts, remove stale ones.',
  'Merge entries that state the same or closely related facts into one concise entry. When a newer entry',
  'replaces an older one (e.g. "uses Node 18" then "upgraded to Node 20"), merge them into the current fact.',
  'Never drop a fact that is still true, and never invent one.',
  'Answer with one JSON object and nothing else:',
  '{"merges":[{"supersedes":["<id>","<id>"],"content":"<merged fact>","type":"USER|MEMORY",',
  '"category":"preference|person|environment|project|decision|gotcha|null"}],"keep":["<id>"]}',
  'Every id you are given must appear exactly once: in the supersedes list of one merge (two or more ids',
  'per merge), or in keep. An entry that is stale must be merged into the entry that replaces it.',
].join('\n');

export function consolidationMessages(entries: readonly MemoryEntry[]): ChatMessage[] {
  const listed = entries.map((entry) => ({
    id: entry.id,
    type: entry.type,
    category: entry.category,
    content: entry.content,
    updatedAt: entry.updatedAt,
  }));
  return [
    { role: 'system', content: CONSOLIDATION_SYSTEM_PROMPT },
    { role: 'user', content: JSON.stringify({ entries: listed }) },
  ];
}

export type PlanVerdict = { readonly ok: true; readonly plan: ConsolidationPlan } | { readonly ok: false; readonly problem: string };

/** Models wrap JSON in a fence now and then; the object itself must still be complete. */
function unfenced(text: string): string {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text);
  return fenced?.[1] ?? text;
}

/**
 * Parses and checks a model's plan against the entries it was given: valid JSON of the schema, only
 * known ids, each id exactly once. Anything else is refused whole: a partial plan could lose a fact.
 */
export function validatePlan(raw: string, entries: readonly Pick<MemoryEntry, 'id'>[]): PlanVerdict {
  let json: unknown;
  try {
    json = JSON.parse(unfenced(raw));
  } catch {
    return { ok: false, problem: 'the answer is not valid JSON' };
  }
  const parsed = PlanSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    return { ok: false, problem: `the JSON does not match the plan schema: ${where}` };
  }
  const known = new Set(entries.map((entry) => entry.id));
  const seen = new Set<string>();
  const mentioned = [...parsed.data.merges.flatMap((merge) => merge.supersedes), ...parsed.data.keep];
  for (const id of mentioned) {
    if (!known.has(id)) return { ok: false, problem: `unknown id ${JSON.stringify(id)}` };
    if (seen.has(id)) return { ok: false, problem: `id ${JSON.stringify(id)} appears more than once` };
    seen.add(id);
  }
  const missing = [...known].filter((id) => !seen.has(id));
  if (missing.length > 0) {
    return { ok: false, problem: `ids missing from both merges and keep: ${missing.map((id) => JSON.stringify(id)).join(', ')}` };
  }
  return { ok: true, plan: parsed.data };
}
