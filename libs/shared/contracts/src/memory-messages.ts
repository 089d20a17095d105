import type { Actor, Category, MemoryEntry, MemoryEvent, MemorySource, MemoryType, Tier1Reason } from '@engram/domain';
import type { MemoryPattern } from './memory-pattern.js';

/** Every write carries who did it and, when there is one, what caused it (an event id or a request id). */
export interface WriteMeta {
  readonly actor: Actor;
  readonly causationId?: string | null;
  readonly requestId?: string;
}

export interface StoreRequest extends WriteMeta {
  readonly pool: string;
  /** Caller-chosen id (4-64 of A-Za-z0-9_-): storing an existing id returns the existing entry, no new event. */
  readonly id?: string;
  /**
   * Without `id`: a retry of this store with the same key (in the same pool) returns the entry the
   * first attempt stored instead of storing another (the REST `Idempotency-Key`, the model's tool call).
   */
  readonly idempotencyKey?: string;
  /**
   * With `idempotencyKey`: a retry must be the same store (content, type, category), else it is refused
   * with `idempotency_key_reused` rather than answered with the first entry (the REST `Idempotency-Key`).
   * Without, the first entry is the answer (a model's replayed tool call is the same call).
   */
  readonly idempotencyKeyBindsRequest?: boolean;
  readonly content: string;
  readonly type?: MemoryType;
  readonly category?: Category | null;
  readonly source?: MemorySource;
  readonly confidence?: number;
  /**
   * When an active entry of the pool already says this (see existingFact), record a reference to it
   * and answer with it (`existing: true`) instead of storing a second copy. The model's writes do; a
   * person's REST POST only with `?dedupe=true`.
   */
  readonly dedupe?: boolean;
}
/** The stored entry, or with `existing` the entry that already said it (nothing new was stored). */
export type StoreResponse = MemoryEntry & { readonly existing?: true };
export interface SearchRequest {
  readonly pool: string;
  readonly query: string;
  readonly limit?: number;
  readonly category?: Category;
  readonly includeArchived?: boolean;
  /** Record a reference for what is returned (the model's search does, a person's browsing does not). */
  readonly recordReference?: boolean;
  /** Who the recorded reference is attributed to; default `llm`. */
  readonly actor?: Actor;
  readonly requestId?: string;
}
export interface ListRequest {
  readonly pool: string;
  readonly category?: Category;
  readonly type?: MemoryType;
  readonly archived?: boolean;
  readonly limit?: number;
  /** Entries to skip, for paging through a pool larger than one page (newest first). */
  readonly offset?: number;
  readonly requestId?: string;
}
/** How a page of memories is ordered, newest / most recently used / most confident first. */
export const PAGE_SORTS = ['created', 'last_used', 'confidence'] as const;
export type PageSort = (typeof PAGE_SORTS)[number];

/** One page of a pool's entries, keyset-paged: pass the previous page's `nextCursor` for the next. */
export interface PageRequest {
  readonly pool: string;
  readonly sort?: PageSort;
  readonly archived?: boolean;
  readonly type?: MemoryType;
  readonly category?: Category;
  readonly confirmed?: boolean;
  readonly source?: MemorySource;
  readonly limit?: number;
  readonly cursor?: string;
  readonly requestId?: string;
}
export type PagedEntry = MemoryEntry & { readonly effectiveConfidence: number };
export interface PageResponse {
  readonly data: readonly PagedEntry[];
  /** Null on the last page. */
  readonly nextCursor: string | null;
}
export interface GetRequest {
  readonly pool: string;
  readonly id: string;
}
export interface UpdateRequest extends WriteMeta {
  readonly pool: string;
  readonly id: string;
  readonly content?: string;
  readonly category?: Category | null;
  readonly type?: MemoryType;
  readonly confirmed?: boolean;
}
export interface IdRequest extends WriteMeta {
  readonly pool: string;
  readonly id: string;
  readonly reason?: string | null;
}
export interface RefreshRequest extends WriteMeta {
  readonly pool: string;
  readonly ids: readonly string[];
}
export interface CategorizeRequest extends WriteMeta {
  readonly pool: string;
  readonly id: string;
  readonly category: Category;
}
export interface ConsolidateRequest extends WriteMeta {
  readonly pool: string;
  readonly model: string;
  readonly merges: readonly {
    readonly content: string;
    readonly type: MemoryType;
    readonly category: Category | null;
    readonly supersedes: readonly string[];
  }[];
}
/** Archive every active entry of the pool that decay has taken below the threshold (the worker's sweep). */
export interface DecaySweepRequest extends WriteMeta {
  readonly pool: string;
  /** ISO time to evaluate decay at; absent: the memory service's clock. */
  readonly asOf?: string;
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
export interface PoolRequest {
  readonly pool: string;
  readonly requestId?: string;
}
export interface EventsAfterRequest {
  readonly after: number;
  readonly pool?: string;
  readonly limit?: number;
}
/** One page of a pool's events (or of one entry's history), oldest first. */
export interface EventsRequest {
  readonly pool: string;
  /** Events with a seq above this one; default 0. Ignored when `cursor` is given. */
  readonly after?: number;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  readonly limit?: number;
  /** Only the events about this entry. */
  readonly memoryId?: string;
  readonly requestId?: string;
}
export interface EventsPage {
  readonly data: readonly MemoryEvent[];
  /** Where the next page starts; null when this page reached the last event so far. */
  readonly nextCursor: string | null;
}

/** An exchange whose extraction job could not reach Redis: memory keeps it on disk and enqueues it later. */
export interface SpoolExtractionRequest {
  readonly pool: string;
  /** Contents of <MEMORY_SUGGEST> markers, already stripped from the client's view. */
  readonly suggestions: readonly string[];
  /** The last user message and the assistant's answer, for context-aware extraction. */
  readonly exchange: { readonly user: string; readonly assistant: string };
  readonly requestId: string;
  /**
   * The exchange's own id (exchangeIdOf, made by the gateway): what its job, its spool file and its
   * extracted facts are named by. The request id is the client's header and may repeat.
   */
  readonly exchangeId: string;
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

/** Texts of a pool's active entries that have no vector of `model` yet (hybrid search; the worker embeds them). */
export interface VectorsMissingRequest {
  readonly pool: string;
  readonly model: string;
  readonly limit?: number;
}
export interface MissingVectorText {
  /** The content hash the vector is stored under. */
  readonly hash: string;
  readonly content: string;
}
export interface StoreVectorsRequest {
  readonly model: string;
  /** `vector`: little-endian float32s, base64 (see @engram/embeddings vector-codec). */
  readonly vectors: readonly { readonly hash: string; readonly vector: string }[];
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
  [MemoryPattern.Confirm]: [IdRequest & { readonly confirmed: boolean }, MemoryEntry];
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
