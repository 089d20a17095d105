import type { Category, MemorySource, MemoryType } from './memory-entry.js';

export const EVENT_SCHEMA_VERSION = 1;

/** Actors: who caused a change. Free-form beyond these, e.g. `worker:decay`. */
export type Actor = 'llm' | 'mcp' | 'user' | 'system' | `worker:${string}` | `cli:${string}`;

export interface MemoryStoredData {
  readonly id: string;
  readonly type: MemoryType;
  readonly category: Category | null;
  readonly content: string;
  readonly confidence: number;
  readonly source: MemorySource;
}
export interface MemoryUpdatedData {
  readonly id: string;
  readonly content?: string;
  readonly category?: Category | null;
  readonly type?: MemoryType;
}
export interface MemoryCategorizedData {
  readonly id: string;
  readonly category: Category;
}
export interface MemoryReferencedData {
  readonly ids: readonly string[];
  /**
   * Set when the log's compaction summed many references into this one event: how many references
   * each id had (`counts[i]` for `ids[i]`) and when the last of them was (`lastAt[i]`). Absent: one
   * reference of each id, at the event's time.
   */
  readonly counts?: readonly number[];
  readonly lastAt?: readonly string[];
  /** Set by compaction: this event stands for `events` events of the log, the first of them at seq `from`. */
  readonly folds?: { readonly from: number; readonly events: number };
}
export interface MemoryConfirmedData {
  readonly id: string;
  readonly confirmed: boolean;
}
export interface MemoryArchivedData {
  readonly id: string;
  readonly reason: string;
}
export interface MemoryRestoredData {
  readonly id: string;
}
export interface MemoryDeletedData {
  readonly id: string;
  readonly reason: string | null;
}
export interface MemoryPurgedData {
  readonly id: string;
  /**
   * Fingerprints of every text the entry had (the store's hash of the pool and the normalised text,
   * never the text): what a store from a conversation may not bring back. Absent in purges logged
   * before fingerprints were.
   */
  readonly forbids?: readonly string[];
}
/** One new entry replacing several; the superseded entries are archived, never deleted. */
export interface MemoryConsolidatedData {
  readonly id: string;
  readonly type: MemoryType;
  readonly category: Category | null;
  readonly content: string;
  readonly confidence: number;
  readonly supersedes: readonly string[];
  readonly model: string;
}

export interface EventDataByType {
  'memory.stored': MemoryStoredData;
  'memory.updated': MemoryUpdatedData;
  'memory.categorized': MemoryCategorizedData;
  'memory.referenced': MemoryReferencedData;
  'memory.confirmed': MemoryConfirmedData;
  'memory.archived': MemoryArchivedData;
  'memory.restored': MemoryRestoredData;
  'memory.deleted': MemoryDeletedData;
  'memory.purged': MemoryPurgedData;
  'memory.consolidated': MemoryConsolidatedData;
}

export type EventType = keyof EventDataByType;
export const EVENT_TYPES = [
  'memory.stored',
  'memory.updated',
  'memory.categorized',
  'memory.referenced',
  'memory.confirmed',
  'memory.archived',
  'memory.restored',
  'memory.deleted',
  'memory.purged',
  'memory.consolidated',
] as const satisfies readonly EventType[];

/** An event before the log gives it a place (seq). */
export type NewEvent = {
  [T in EventType]: {
    readonly type: T;
    readonly id: string;
    readonly at: string;
    readonly pool: string;
    readonly actor: Actor;
    readonly causationId: string | null;
    readonly schemaVersion: typeof EVENT_SCHEMA_VERSION;
    readonly data: EventDataByType[T];
  };
}[EventType];

/** An event as the log holds it: gap-free `seq`, starting at 1. */
export type MemoryEvent = NewEvent & { readonly seq: number };

export type EventOf<T extends EventType> = Extract<MemoryEvent, { type: T }>;
