export const MEMORY_TYPES = ['USER', 'MEMORY'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export const CATEGORIES = ['preference', 'person', 'environment', 'project', 'decision', 'gotcha'] as const;
export type Category = (typeof CATEGORIES)[number];

export const CONTENT_MAX_CHARS = 2000;

/** Where an entry came from: a tool call of the model, a person, a marker, a job. */
export const MEMORY_SOURCES = ['llm', 'user', 'marker', 'extraction', 'consolidation', 'import'] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];

/** One memory as the projection holds it. Times are ISO-8601 UTC strings. */
export interface MemoryEntry {
  readonly id: string;
  readonly pool: string;
  readonly type: MemoryType;
  readonly category: Category | null;
  readonly content: string;
  readonly confidence: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly lastReferenced: string | null;
  readonly referenceCount: number;
  readonly isConfirmed: boolean;
  readonly isArchived: boolean;
  readonly source: MemorySource;
  /** Set when a consolidation merged this entry into another one. */
  readonly supersededBy: string | null;
  /** Ids this entry was merged from (consolidation). */
  readonly supersedes: readonly string[];
}

export function isCategory(value: unknown): value is Category {
  return typeof value === 'string' && (CATEGORIES as readonly string[]).includes(value);
}

export function isMemoryType(value: unknown): value is MemoryType {
  return typeof value === 'string' && (MEMORY_TYPES as readonly string[]).includes(value);
}
