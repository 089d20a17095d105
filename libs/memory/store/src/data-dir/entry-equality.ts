import type { MemoryEntry } from '@engram/domain';

const FIELDS = [
  'pool',
  'type',
  'category',
  'content',
  'confidence',
  'createdAt',
  'updatedAt',
  'lastReferenced',
  'referenceCount',
  'isConfirmed',
  'isArchived',
  'source',
  'supersededBy',
] as const satisfies readonly (keyof MemoryEntry)[];

/** Field names where two versions of an entry differ (empty when equal). */
export function differingFields(a: MemoryEntry, b: MemoryEntry): string[] {
  const fields: string[] = FIELDS.filter((field) => a[field] !== b[field]);
  if (a.supersedes.join('\n') !== b.supersedes.join('\n')) fields.push('supersedes');
  return fields;
}

/** Human-readable differences between two sets of entries, at most `max` lines. */
export function compareEntries(actual: ReadonlyMap<string, MemoryEntry>, expected: ReadonlyMap<string, MemoryEntry>, max = 20): string[] {
  const problems: string[] = [];
  for (const [id, entry] of expected) {
    const found = actual.get(id);
    if (!found) problems.push(`memory ${id} is missing from the database`);
    else {
      const fields = differingFields(found, entry);
      if (fields.length > 0) problems.push(`memory ${id} differs in ${fields.join(', ')}`);
    }
  }
  for (const id of actual.keys()) if (!expected.has(id)) problems.push(`memory ${id} is in the database but not in replay(log)`);
  return problems.length > max ? [...problems.slice(0, max), `... and ${problems.length - max} more`] : problems;
}
