import type { MemoryEntry, MemoryEvent, Tier1Reason } from '@engram/domain';
import type { MemoryPattern } from './memory-pattern.js';
import type { MemoryRequest } from './memory-requests.js';

// What a caller sends, per message (the schemas in memory-requests.ts are the one definition).
export type StoreRequest = MemoryRequest<typeof MemoryPattern.Store>;
export type SearchRequest = MemoryRequest<typeof MemoryPattern.Search>;
export type ListRequest = MemoryRequest<typeof MemoryPattern.List>;
export type PageRequest = MemoryRequest<typeof MemoryPattern.Page>;
export type GetRequest = MemoryRequest<typeof MemoryPattern.Get>;
export type UpdateRequest = MemoryRequest<typeof MemoryPattern.Update>;
export type IdRequest = MemoryRequest<typeof MemoryPattern.Delete>;
export type ConfirmRequest = MemoryRequest<typeof MemoryPattern.Confirm>;
export type RefreshRequest = MemoryRequest<typeof MemoryPattern.Refresh>;
export type CategorizeRequest = MemoryRequest<typeof MemoryPattern.Categorize>;
export type ConsolidateRequest = MemoryRequest<typeof MemoryPattern.Consolidate>;
export type DecaySweepRequest = MemoryRequest<typeof MemoryPattern.DecaySweep>;
export type PoolRequest = MemoryRequest<typeof MemoryPattern.Tier1>;
export type EventsAfterRequest = MemoryRequest<typeof MemoryPattern.EventsAfter>;
export type EventsRequest = MemoryRequest<typeof MemoryPattern.Events>;
/** This gateway always names the exchange; the schema still takes a request from one before exchange ids. */
export type SpoolExtractionRequest = MemoryRequest<typeof MemoryPattern.SpoolExtraction> & { readonly exchangeId: string };
export type VectorsMissingRequest = MemoryRequest<typeof MemoryPattern.VectorsMissing>;
export type StoreVectorsRequest = MemoryRequest<typeof MemoryPattern.StoreVectors>;

/** The stored entry, or with `existing` the entry that already said it (nothing new was stored). */
export type StoreResponse = MemoryEntry & { readonly existing?: true };
export type PagedEntry = MemoryEntry & { readonly effectiveConfidence: number };
export interface PageResponse {
  readonly data: readonly PagedEntry[];
  /** Null on the last page. */
  readonly nextCursor: string | null;
}
export interface DecaySweepResponse {
  readonly pool: string;
  /** The time decay was evaluated at. */
  readonly asOf: string;
  /** Active entries looked at. */
  readonly examined: number;
  /** The entries archived, all in one write. */
  readonly archived: readonly string[];
}
/**
 * The store answers. `diskFull`: since when (and why) it takes no writes because its data disk is
 * full; reads go on, and writes are taken again once space is freed. Null otherwise.
 */
export interface PingResponse {
  readonly ok: true;
  readonly lastSeq: number;
  readonly diskFull: { readonly since: string; readonly error: string } | null;
}
export interface EventsPage {
  readonly data: readonly MemoryEvent[];
  /** Where the next page starts; null when this page reached the last event so far. */
  readonly nextCursor: string | null;
}

export interface SearchHit {
  readonly entry: MemoryEntry;
  readonly score: number;
  readonly effectiveConfidence: number;
}
export interface Tier1Response {
  readonly pool: string;
  /** The delimited block to inject; empty string when the pool has nothing for Tier 1. */
  readonly block: string;
  readonly ids: readonly string[];
  /** Last seq applied when the block was built; changes whenever memory changes. */
  readonly seq: number;
}
/** The block as injected, and why each of the pool's active entries is or is not in it. */
export interface Tier1PlanResponse extends Tier1Response {
  readonly maxChars: number;
  /** Active entries per reason. */
  readonly counts: Readonly<Partial<Record<Tier1Reason, number>>>;
  /** Every included entry, in block order, then up to 100 examples per other reason. */
  readonly entries: readonly {
    readonly entry: MemoryEntry;
    readonly reason: Tier1Reason;
    readonly confidence: number;
    readonly line: string | null;
  }[];
}
export interface StatsResponse {
  readonly lastSeq: number;
  readonly pools: readonly {
    readonly pool: string;
    readonly active: number;
    readonly archived: number;
    readonly byCategory: Readonly<Record<string, number>>;
    /** Last seq of an event about the pool, and the latest change to one of its entries (null: none left). */
    readonly lastSeq: number;
    readonly lastChangedAt: string | null;
  }[];
}
export interface ConsolidateResponse {
  readonly created: readonly MemoryEntry[];
  readonly archived: readonly string[];
}

export interface MissingVectorText {
  /** The content hash the vector is stored under. */
  readonly hash: string;
  readonly content: string;
}
/** Request and response type of every pattern, so that a client call is checked end to end. */
export interface MemoryContract {
  [MemoryPattern.Store]: [StoreRequest, StoreResponse];
  [MemoryPattern.Search]: [SearchRequest, SearchHit[]];
  [MemoryPattern.List]: [ListRequest, MemoryEntry[]];
  [MemoryPattern.Page]: [PageRequest, PageResponse];
  [MemoryPattern.Get]: [GetRequest, MemoryEntry];
  [MemoryPattern.Update]: [UpdateRequest, MemoryEntry];
  [MemoryPattern.Delete]: [IdRequest, MemoryEntry];
  [MemoryPattern.Purge]: [IdRequest, { readonly id: string; readonly purged: true }];
  [MemoryPattern.Refresh]: [RefreshRequest, MemoryEntry[]];
  [MemoryPattern.Confirm]: [ConfirmRequest, MemoryEntry];
  [MemoryPattern.Categorize]: [CategorizeRequest, MemoryEntry];
  [MemoryPattern.Archive]: [IdRequest, MemoryEntry];
  [MemoryPattern.Restore]: [IdRequest, MemoryEntry];
  [MemoryPattern.Consolidate]: [ConsolidateRequest, ConsolidateResponse];
  [MemoryPattern.DecaySweep]: [DecaySweepRequest, DecaySweepResponse];
  [MemoryPattern.Tier1]: [PoolRequest, Tier1Response];
  [MemoryPattern.Tier1Plan]: [PoolRequest, Tier1PlanResponse];
  [MemoryPattern.Stats]: [Record<string, never>, StatsResponse];
  [MemoryPattern.EventsAfter]: [EventsAfterRequest, MemoryEvent[]];
  [MemoryPattern.Events]: [EventsRequest, EventsPage];
  [MemoryPattern.SpoolExtraction]: [SpoolExtractionRequest, { readonly spooled: true }];
  [MemoryPattern.Ping]: [Record<string, never>, PingResponse];
  [MemoryPattern.VectorsMissing]: [VectorsMissingRequest, MissingVectorText[]];
  [MemoryPattern.StoreVectors]: [StoreVectorsRequest, { readonly stored: number }];
}
