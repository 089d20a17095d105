import type { Category, MemoryEntry, MemorySource, MemoryType } from '@engram/domain';

/** A `memories` row as SQLite returns it. */
export interface MemoryRow {
  readonly id: string;
  readonly pool: string;
  readonly type: string;
  readonly category: string | null;
  readonly content: string;
  readonly confidence: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_referenced: string | null;
  readonly reference_count: number;
  readonly is_confirmed: number;
  readonly is_archived: number;
  readonly source: string;
  readonly superseded_by: string | null;
  readonly supersedes: string;
}

/** The columns of a row, in table order. */
export const MEMORY_COLUMNS = [
  'id',
  'pool',
  'type',
  'category',
  'content',
  'confidence',
  'created_at',
  'updated_at',
  'last_referenced',
  'reference_count',
  'is_confirmed',
  'is_archived',
  'source',
  'superseded_by',
  'supersedes',
] as const satisfies readonly (keyof MemoryRow)[];

export function toEntry(row: MemoryRow): MemoryEntry {
  return {
    id: row.id,
    pool: row.pool,
    type: row.type as MemoryType,
    category: row.category as Category | null,
    content: row.content,
    confidence: row.confidence,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastReferenced: row.last_referenced,
    referenceCount: row.reference_count,
    isConfirmed: row.is_confirmed === 1,
    isArchived: row.is_archived === 1,
    source: row.source as MemorySource,
    supersededBy: row.superseded_by,
    supersedes: JSON.parse(row.supersedes) as string[],
  };
}

export function toRow(entry: MemoryEntry): MemoryRow {
  return {
    id: entry.id,
    pool: entry.pool,
    type: entry.type,
    category: entry.category,
    content: entry.content,
    confidence: entry.confidence,
    created_at: entry.createdAt,
    updated_at: entry.updatedAt,
    last_referenced: entry.lastReferenced,
    reference_count: entry.referenceCount,
    is_confirmed: entry.isConfirmed ? 1 : 0,
    is_archived: entry.isArchived ? 1 : 0,
    source: entry.source,
    superseded_by: entry.supersededBy,
    supersedes: JSON.stringify(entry.supersedes),
  };
}
