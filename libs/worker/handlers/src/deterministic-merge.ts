import { contentTokens, groupNearDuplicates, type MemoryEntry } from '@engram/domain';
import type { ConsolidationPlan, PlannedMerge } from './consolidation-plan.js';

/**
 * The entry whose wording survives a merge: the one with the most words, which covers the others
 * (see groupNearDuplicates); among equals, one a person confirmed, then the longest, then the newest.
 */
function representative(group: readonly MemoryEntry[]): MemoryEntry {
  const words = new Map(group.map((entry) => [entry.id, new Set(contentTokens(entry.content)).size]));
  const ranked = [...group].sort(
    (a, b) =>
      (words.get(b.id) ?? 0) - (words.get(a.id) ?? 0) ||
      Number(b.isConfirmed) - Number(a.isConfirmed) ||
      b.content.length - a.content.length ||
      b.updatedAt.localeCompare(a.updatedAt) ||
      a.id.localeCompare(b.id),
  );
  const first = ranked[0];
  if (!first) throw new Error('empty near-duplicate group');
  return first;
}

/**
 * Merges near-duplicates only (same type, high text similarity): the model-free consolidation.
 * Near-duplicates say the same fact, so keeping the best wording loses nothing, and the others
 * stay reachable through `supersedes`.
 */
export function deterministicPlan(entries: readonly MemoryEntry[]): ConsolidationPlan {
  const ordered = [...entries].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const groups = groupNearDuplicates(ordered, { text: (entry) => entry.content, key: (entry) => entry.type });
  const merged = new Set(groups.flat().map((entry) => entry.id));
  const merges: PlannedMerge[] = groups.map((group) => {
    const best = representative(group);
    return {
      supersedes: group.map((entry) => entry.id),
      content: best.content,
      type: best.type,
      category: best.category ?? group.find((entry) => entry.category !== null)?.category ?? null,
    };
  });
  return { merges, keep: ordered.filter((entry) => !merged.has(entry.id)).map((entry) => entry.id) };
}
