import type { Logger } from 'pino';
import {
  MemoryError,
  type CategorizeRequest,
  type ConsolidateRequest,
  type ConsolidateResponse,
  type EventsAfterRequest,
  type EventsPage,
  type EventsRequest,
  type GetRequest,
  type IdRequest,
  type ListRequest,
  type PageRequest,
  type PageResponse,
  type Tier1PlanResponse,
  type PoolRequest,
  type RefreshRequest,
  type SearchHit,
  type SearchRequest,
  type StatsResponse,
  type StoreRequest,
  type StoreResponse,
  type Tier1Response,
  type UpdateRequest,
} from '@engram/contracts';
import {
  DAY_MS,
  WriteRejection,
  buildTier1,
  changesOf,
  decideArchive,
  decideCategorize,
  decideConfirm,
  decideConsolidate,
  decideDelete,
  decidePurge,
  decideRecordReferences,
  decideRefresh,
  decideRestore,
  decideStore,
  decideUpdate,
  planTier1,
  effectiveConfidence,
  type EntryChanges,
  type MemoryEntry,
  type MemoryEvent,
  type NewEvent,
  type Tier1Reason,
  type WriteContext,
} from '@engram/domain';
import type { DataDirLock } from './data-dir-lock.js';
import type { EventIndex } from './event-index.js';
import type { EventLog } from './event-log.js';
import { EventPages } from './event-pages.js';
import type { FlatFiles } from './flat-files.js';
import type { HybridSearch } from './hybrid-search.js';
import { FreshIds } from './fresh-ids.js';
import { idempotentMemoryId } from './idempotency.js';
import { newEventId, newMemoryId } from './ids.js';
import type { MemoryQueries } from './memory-queries.js';
import type { OutboxCursor } from './outbox-cursor.js';
import type { Projection } from './projection.js';
import { ReferenceBatcher, type ReferenceGroup } from './reference-batcher.js';
import { decodeCursor, encodeCursor } from './page-cursor.js';
import { julianDay } from './julian-day.js';
import { searchTerms } from './search-query.js';
import {
  invalid,
  notFound,
  validActor,
  validCategory,
  validCausation,
  validConfidence,
  validContent,
  validId,
  validLimit,
  validOffset,
  validPageFilters,
  validPool,
  validQuery,
  validReason,
  validSource,
  validType,
} from './validation.js';
import { sameFactInPool } from './same-fact-in-pool.js';
import type { VectorService } from './vector-service.js';
import type { WalCheckpointer } from './wal-checkpointer.js';

/** The side effects the service works through; each is a class of this lib, replaceable by a typed fake. */
export interface MemoryServiceDeps {
  readonly log: Pick<EventLog, 'append' | 'read' | 'readSeqs' | 'redact' | 'close' | 'onDurable' | 'lastSeq'>;
  /** Which events belong to which pool and entry (the projection's). */
  readonly eventIndex: Pick<EventIndex, 'seqs'>;
  /** Events into rows, and the purge's scrub of the database. */
  readonly projection: Pick<Projection, 'apply' | 'scrub' | 'close' | 'lastSeq'>;
  readonly queries: Pick<
    MemoryQueries,
    | 'get'
    | 'storedIds'
    | 'list'
    | 'page'
    | 'activeEntries'
    | 'search'
    | 'lexicalSearch'
    | 'idsOfPool'
    | 'byConfidence'
    | 'tier1Candidates'
    | 'activeCount'
    | 'poolSeq'
    | 'stats'
  >;
  readonly outboxCursor: Pick<OutboxCursor, 'dispatchedSeq' | 'markDispatched'>;
  readonly flatFiles: Pick<FlatFiles, 'refresh' | 'noteChanges'>;
  readonly lock: Pick<DataDirLock, 'release'> | null;
  /** Deletes the copies of the database a purge must also reach (see removeMovedAsideDatabases); returns their names. */
  readonly removeStaleCopies?: () => readonly string[];
  /** Checkpoints the database's WAL off the event loop; told of each commit, stopped before the database closes. */
  readonly checkpointer?: Pick<WalCheckpointer, 'noteCommit' | 'stop'>;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly tier1MaxChars: number;
  readonly newId?: () => string;
  /** Set when an embeddings endpoint is configured: searches with words fuse meaning with words. */
  readonly hybrid?: Pick<HybridSearch, 'search'>;
  readonly vectors?: VectorService;
}

const SEARCH_DEFAULT_LIMIT = 10;
const SEARCH_MAX_LIMIT = 100;
const LIST_DEFAULT_LIMIT = 50;
const LIST_MAX_LIMIT = 1000;
const PAGE_MAX_LIMIT = 500;
/** A Tier 1 plan lists every included entry and at most this many left out for each reason (all are counted). */
const TIER1_PLAN_EXAMPLES = 100;
const REFRESH_MAX_IDS = 100;

/**
 * The memory operations. Write path: validate against the current state (acknowledged plus
 * in-flight writes) -> append to the log (group-committed fsync) -> the log's durable hook applies
 * the batch to SQLite in seq order and tells listeners -> re-render the pool's flat files -> answer.
 * Reads answer from SQLite, i.e. only acknowledged state.
 */
export class MemoryService {
  private readonly listeners: ((events: readonly MemoryEvent[]) => void)[] = [];
  /** Entries as in-flight (not yet durable) writes will leave them, so validation sees them. */
  private readonly inFlight = new Map<string, { entry: MemoryEntry | undefined; writes: number }>();
  private readonly tier1Cache = new Map<string, { key: string; response: Tier1Response }>();
  private readonly references: ReferenceBatcher;
  private readonly freshIds: FreshIds;
  private readonly eventPages: EventPages;
  private closing: Promise<void> | null = null;
  private readonly commits = new Set<Promise<unknown>>();
  /** Flat-file renders of batches already durable; the next batch waits for them (see durablyCommit). */
  private readonly renders = new Set<Promise<unknown>>();

  /** The worker's vector RPCs; null when hybrid search is off. */
  readonly vectors: VectorService | null;

  constructor(private readonly deps: MemoryServiceDeps) {
    this.vectors = deps.vectors ?? null;
    this.freshIds = new FreshIds(deps.newId ?? newMemoryId, (ids) => deps.queries.storedIds(ids));
    this.eventPages = new EventPages({ log: deps.log, index: deps.eventIndex });
    this.references = new ReferenceBatcher((groups) => this.recordReferences(groups), deps.logger);
    deps.log.onDurable((events) => this.applyDurable(events));
  }

  // ---- writes: validate the request, decide in the domain, commit ----

  async store(request: StoreRequest): Promise<StoreResponse> {
    const context = this.writeContext(request);
    const content = validContent(request.content);
    const category = request.category === undefined ? null : validCategory(request.category);
    const type = request.type === undefined ? defaultType(category) : validType(request.type);
    const confidence = request.confidence === undefined ? 1 : validConfidence(request.confidence);
    const source = request.source === undefined ? (context.actor === 'user' ? 'user' : 'llm') : validSource(request.source);
    const chosenId =
      request.id !== undefined
        ? validId(request.id)
        : request.idempotencyKey !== undefined
          ? idempotentMemoryId(context.pool, request.idempotencyKey)
          : undefined;
    const atChosenId = chosenId === undefined ? undefined : this.current(chosenId);
    const dedupe = request.dedupe === true;
    // Only a store that would write looks for the same fact (a search of the pool).
    const sameFact = dedupe && !atChosenId ? sameFactInPool(this.deps.queries, context.pool, content) : null;
    const decision = decided(() =>
      decideStore(
        { context, chosenId, freshId: () => this.freshId(), type, category, content, confidence, source, dedupe },
        { atChosenId, sameFact },
      ),
    );
    switch (decision.outcome) {
      case 'retried':
        return this.settled(decision.id);
      case 'said-again':
        await this.commit(decision.events);
        return { ...this.acknowledged(context.pool, decision.id), existing: true };
      case 'stored': {
        // The id was just found unused (chosen and absent, or fresh): no need to read it again while tracking.
        const changes = await this.commit(decision.events, decision.id);
        // The stored entry is exactly what the event says (the projection applies the same changesOf).
        return changes.get(decision.id) ?? this.acknowledged(context.pool, decision.id);
      }
    }
  }

  async update(request: UpdateRequest): Promise<MemoryEntry> {
    const context = this.writeContext(request);
    const id = requiredId(request.id);
    const content = request.content === undefined ? undefined : validContent(request.content);
    const category = request.category === undefined ? undefined : validCategory(request.category);
    const type = request.type === undefined ? undefined : validType(request.type);
    if (request.confirmed !== undefined && typeof request.confirmed !== 'boolean') throw invalid('confirmed must be a boolean');
    const command = {
      context,
      id,
      ...(content !== undefined ? { content } : {}),
      ...(category !== undefined ? { category } : {}),
      ...(type !== undefined ? { type } : {}),
      ...(request.confirmed !== undefined ? { confirmed: request.confirmed } : {}),
    };
    return this.transition(
      id,
      decided(() => decideUpdate(command, this.current(id))),
    );
  }

  async delete(request: IdRequest): Promise<MemoryEntry> {
    const context = this.writeContext(request);
    const id = requiredId(request.id);
    const reason = validReason(request.reason);
    return this.transition(
      id,
      decided(() => decideDelete({ context, id, reason }, this.current(id))),
    );
  }

  /** Asked by a person, or by the decay sweep (worker:decay) once an entry's effective confidence fell below the threshold. */
  async archive(request: IdRequest): Promise<MemoryEntry> {
    const context = this.writeContext(request);
    const id = requiredId(request.id);
    const reason = validReason(request.reason);
    return this.transition(
      id,
      decided(() => decideArchive({ context, id, reason }, this.current(id))),
    );
  }

  async restore(request: IdRequest): Promise<MemoryEntry> {
    const context = this.writeContext(request);
    const id = requiredId(request.id);
    return this.transition(
      id,
      decided(() => decideRestore({ context, id }, this.current(id))),
    );
  }

  async confirm(request: IdRequest & { readonly confirmed: boolean }): Promise<MemoryEntry> {
    if (typeof request.confirmed !== 'boolean') throw invalid('confirmed must be a boolean');
    const context = this.writeContext(request);
    const id = requiredId(request.id);
    return this.transition(
      id,
      decided(() => decideConfirm({ context, id, confirmed: request.confirmed }, this.current(id))),
    );
  }

  async categorize(request: CategorizeRequest): Promise<MemoryEntry> {
    const category = validCategory(request.category);
    if (category === null) throw invalid('categorize needs a category');
    const context = this.writeContext(request);
    const id = requiredId(request.id);
    return this.transition(
      id,
      decided(() => decideCategorize({ context, id, category }, this.current(id))),
    );
  }

  /** Forgets for real: the row, its FTS terms and flat-file lines go, and the log lines that carried it are redacted. */
  async purge(request: IdRequest): Promise<{ readonly id: string; readonly purged: true }> {
    const context = this.writeContext(request);
    const id = requiredId(request.id);
    await this.commit(decided(() => decidePurge({ context, id }, this.current(id))));
    await this.deps.log.redact(new Set([id]));
    this.deps.projection.scrub();
    const removed = this.deps.removeStaleCopies?.() ?? [];
    if (removed.length > 0) this.deps.logger.warn({ files: removed }, 'purge deleted databases moved aside at start, which still held the entry');
    return { id, purged: true };
  }

  async refresh(request: RefreshRequest): Promise<MemoryEntry[]> {
    const context = this.writeContext(request);
    if (!Array.isArray(request.ids) || request.ids.length === 0) throw invalid('ids must be a non-empty array');
    if (request.ids.length > REFRESH_MAX_IDS) throw invalid(`at most ${REFRESH_MAX_IDS} ids per refresh`);
    const ids = request.ids.map((id: unknown) => requiredId(id));
    const decision = decided(() => decideRefresh({ context, ids }, (id) => this.current(id)));
    await this.commit(decision.events);
    return decision.ids.map((id) => this.acknowledged(context.pool, id));
  }

  async consolidate(request: ConsolidateRequest): Promise<ConsolidateResponse> {
    const context = this.writeContext(request);
    if (typeof request.model !== 'string' || request.model === '') throw invalid('model must be a non-empty string');
    if (!Array.isArray(request.merges) || request.merges.length === 0) throw invalid('merges must be a non-empty array');
    const merges = request.merges.map((merge) => {
      const content = validContent(merge.content);
      const type = validType(merge.type);
      const category = validCategory(merge.category ?? null);
      const supersedes: readonly unknown[] = Array.isArray(merge.supersedes) ? merge.supersedes : [];
      if (supersedes.length === 0) throw invalid('each merge must supersede at least one id');
      return { content, type, category, supersedes: supersedes.map((id) => requiredId(id)) };
    });
    const model = request.model;
    const decision = decided(() =>
      decideConsolidate({ context, model, merges: merges.map((merge) => ({ ...merge, id: this.freshId() })) }, (id) => this.current(id)),
    );
    await this.commit(decision.events);
    return { created: decision.created.map((id) => this.acknowledged(context.pool, id)), archived: decision.archived };
  }

  // ---- reads ----

  async get(request: GetRequest): Promise<MemoryEntry> {
    const pool = validPool(request.pool);
    if (typeof request.id !== 'string') throw invalid('id must be a string');
    return this.acknowledged(pool, request.id);
  }

  async list(request: ListRequest): Promise<MemoryEntry[]> {
    const pool = validPool(request.pool);
    return this.deps.queries.list({
      pool,
      ...(request.category !== undefined ? { category: nonNullCategory(request.category) } : {}),
      ...(request.type !== undefined ? { type: validType(request.type) } : {}),
      archived: request.archived === true,
      limit: validLimit(request.limit, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT),
      offset: validOffset(request.offset),
    });
  }

  /** A page of a pool's entries for a person browsing them, keyset-paged (see Projection.page). */
  async page(request: PageRequest): Promise<PageResponse> {
    const pool = validPool(request.pool);
    const filters = validPageFilters(request);
    const limit = validLimit(request.limit, LIST_DEFAULT_LIMIT, PAGE_MAX_LIMIT);
    const after = request.cursor === undefined || request.cursor === null ? undefined : decodeCursor(request.cursor, filters.sort);
    const today = after?.today ?? julianDay(this.deps.clock());
    const rows = this.deps.queries.page({ pool, ...filters, limit: limit + 1, today, ...(after ? { after } : {}) });
    const now = fromJulianDay(today);
    const data = rows.slice(0, limit).map((row) => ({ ...row.entry, effectiveConfidence: effectiveConfidence(row.entry, now) }));
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    return { data, nextCursor: last ? encodeCursor({ sort: filters.sort, key: last.key, rowid: last.rowid, today }) : null };
  }

  /**
   * Full-text search over every entry of the pool, relevance first (see LexicalSearch; effective
   * confidence breaks ties). Any text is accepted: it is reduced to its words, stopwords dropped
   * (see searchTerms). Without words (empty, only symbols), the entries with the highest
   * effective confidence. With
   * `recordReference`, the returned ids are recorded as memory.referenced in the background (the
   * answer never waits for that fsync; see ReferenceBatcher).
   */
  async search(request: SearchRequest): Promise<SearchHit[]> {
    const pool = validPool(request.pool);
    const query = validQuery(request.query);
    const limit = validLimit(request.limit, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT);
    const category = request.category === undefined ? undefined : nonNullCategory(request.category);
    const includeArchived = request.includeArchived === true;
    const actor = request.actor === undefined ? 'llm' : validActor(request.actor);
    const now = this.deps.clock();
    const terms = searchTerms(query);
    let hits: SearchHit[];
    if (terms.length === 0) {
      hits = this.deps.queries.byConfidence(pool, includeArchived, category, Math.max(50, limit * 5)).map((entry) => {
        const effective = effectiveConfidence(entry, now);
        return { entry, score: effective, effectiveConfidence: effective };
      });
      hits.sort((a, b) => b.score - a.score || (a.entry.id < b.entry.id ? -1 : 1));
      hits = hits.slice(0, limit);
    } else {
      const lexical = (depth: number): SearchHit[] =>
        this.deps.queries.search({ pool, terms, includeArchived, limit: depth, now, ...(category ? { category } : {}) });
      hits = this.deps.hybrid
        ? await this.deps.hybrid.search({ pool, query, limit, includeArchived, now, ...(category ? { category } : {}) }, lexical)
        : lexical(limit);
    }
    if (request.recordReference === true && hits.length > 0) {
      this.references.add(
        pool,
        hits.map((hit) => hit.entry.id),
        actor,
        request.requestId ?? null,
      );
    }
    return hits;
  }

  /** Byte-identical for the same pool state and UTC day (cached on both). */
  async tier1(request: PoolRequest): Promise<Tier1Response> {
    const pool = validPool(request.pool);
    const now = this.deps.clock();
    const seq = this.deps.queries.poolSeq(pool);
    const key = `${seq}:${Math.floor(now.getTime() / DAY_MS)}`;
    const cached = this.tier1Cache.get(pool);
    if (cached?.key === key) return cached.response;
    const { block, ids } = buildTier1(this.deps.queries.tier1Candidates(pool), { now, maxChars: this.deps.tier1MaxChars });
    const response: Tier1Response = { pool, block, ids, seq };
    this.tier1Cache.set(pool, { key, response });
    return response;
  }

  /** The block exactly as tier1 gives it, and why each active entry of the pool is or is not in it. */
  async tier1Plan(request: PoolRequest): Promise<Tier1PlanResponse> {
    const injected = await this.tier1(request);
    const plan = planTier1(this.deps.queries.activeEntries(injected.pool), { now: this.deps.clock(), maxChars: this.deps.tier1MaxChars });
    const counts: Partial<Record<Tier1Reason, number>> = {};
    const entries = plan.decisions.filter((decision) => {
      counts[decision.reason] = (counts[decision.reason] ?? 0) + 1;
      return decision.reason === 'included' || (counts[decision.reason] ?? 0) <= TIER1_PLAN_EXAMPLES;
    });
    return { ...injected, maxChars: this.deps.tier1MaxChars, counts, entries };
  }

  async stats(_request: Record<string, never> = {}): Promise<StatsResponse> {
    return { lastSeq: this.deps.projection.lastSeq, pools: this.deps.queries.stats() };
  }

  async eventsAfter(request: EventsAfterRequest): Promise<MemoryEvent[]> {
    return this.eventPages.after(request);
  }

  /** A page of a pool's events, or of one entry's history (see EventPages). */
  async events(request: EventsRequest): Promise<EventsPage> {
    return this.eventPages.page(request);
  }

  async ping(_request: Record<string, never> = {}): Promise<{ readonly ok: true; readonly lastSeq: number }> {
    return { ok: true, lastSeq: this.deps.projection.lastSeq };
  }

  // ---- outbox and lifecycle ----

  /** Called after each durable batch is applied, with its events in seq order. */
  onCommitted(listener: (events: readonly MemoryEvent[]) => void): void {
    this.listeners.push(listener);
  }

  dispatchedSeq(): number {
    return this.deps.outboxCursor.dispatchedSeq();
  }

  markDispatched(seq: number): void {
    this.deps.outboxCursor.markDispatched(seq);
  }

  activeCount(pool: string): number {
    return this.deps.queries.activeCount(validPool(pool));
  }

  /** Writes pending references, waits for in-flight writes, closes the log and database, releases the data dir. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.references.flush();
      await Promise.allSettled([...this.commits]);
      await this.deps.log.close();
      await this.deps.checkpointer?.stop();
      this.deps.projection.close();
      this.deps.lock?.release();
    })();
    return this.closing;
  }

  // ---- internals ----

  private writeContext(request: { pool: unknown; actor: unknown; causationId?: unknown; requestId?: unknown }): WriteContext {
    if (this.closing) throw new MemoryError('unavailable', 'memory service is shutting down');
    return {
      pool: validPool(request.pool),
      actor: validActor(request.actor),
      causationId: validCausation(request.causationId, request.requestId),
      at: this.deps.clock().toISOString(),
      newEventId,
    };
  }

  /** Commits what a command decided about one entry, and answers that entry as acknowledged once settled. */
  private async transition(id: string, events: readonly NewEvent[]): Promise<MemoryEntry> {
    if (events.length > 0) await this.commit(events);
    return this.settled(id);
  }

  /**
   * `unused`: an id the caller has just found to be neither stored nor in flight. Resolves with the
   * entries the events leave (as decided against the current state), once durable, applied and rendered.
   */
  private commit(events: readonly NewEvent[], unused?: string): Promise<EntryChanges> {
    const commit = this.durablyCommit(events, unused);
    this.commits.add(commit);
    void commit.finally(() => this.commits.delete(commit)).catch(() => undefined);
    return commit;
  }

  /**
   * A commit goes to the log only once the flat-file renders of earlier batches are done. Rewriting
   * a pool's files costs the same for one new entry as for fifty, so writers that arrive meanwhile
   * wait and then share one fsync, one SQLite transaction and one render per pool, instead of
   * forming a second batch whose renders would double the file rewrites.
   */
  private async durablyCommit(events: readonly NewEvent[], unused: string | undefined): Promise<EntryChanges> {
    const { touched, changes } = this.trackInFlight(events, unused);
    try {
      if (this.renders.size > 0) await Promise.allSettled([...this.renders]);
      await this.deps.log.append(events);
    } finally {
      this.untrackInFlight(touched);
    }
    const pools = new Set(events.filter((event) => event.type !== 'memory.referenced').map((event) => event.pool));
    const render = Promise.all([...pools].map((pool) => this.deps.flatFiles.refresh(pool)));
    this.renders.add(render);
    try {
      await render;
    } finally {
      this.renders.delete(render);
    }
    return changes;
  }

  /** The changes of each event, computed once: what later writes decide against until the batch is applied. */
  private trackInFlight(
    events: readonly NewEvent[],
    unused: string | undefined,
  ): { touched: string[]; changes: Map<string, MemoryEntry | undefined> } {
    const touched: string[] = [];
    const all = new Map<string, MemoryEntry | undefined>();
    for (const event of events) {
      // A reference moves only the decay anchor and a counter, which no decision reads (at most a
      // consolidation's starting confidence misses a reference milliseconds old); tracking it would
      // cost a row read per id on every reference batch.
      if (event.type === 'memory.referenced') continue;
      const changes = changesOf({ ...event, seq: 0 } as MemoryEvent, (id) => (id === unused ? undefined : this.current(id)));
      for (const [id, entry] of changes) {
        const slot = this.inFlight.get(id) ?? { entry, writes: 0 };
        slot.entry = entry;
        slot.writes += 1;
        this.inFlight.set(id, slot);
        touched.push(id);
        all.set(id, entry);
      }
    }
    return { touched, changes: all };
  }

  private untrackInFlight(ids: readonly string[]): void {
    for (const id of ids) {
      const slot = this.inFlight.get(id);
      if (!slot) continue;
      slot.writes -= 1;
      if (slot.writes === 0) this.inFlight.delete(id);
    }
  }

  /** The log's durable hook: runs synchronously, in seq order, before any append resolves. */
  private applyDurable(events: readonly MemoryEvent[]): void {
    this.deps.flatFiles.noteChanges(this.deps.projection.apply(events));
    for (const event of events) {
      if (event.type === 'memory.stored' || event.type === 'memory.consolidated') this.freshIds.noteUsed(event.data.id);
    }
    this.deps.checkpointer?.noteCommit(events.length);
    for (const listener of this.listeners) {
      try {
        listener(events);
      } catch (error) {
        this.deps.logger.error({ err: error }, 'an onCommitted listener failed');
      }
    }
  }

  private async recordReferences(groups: readonly ReferenceGroup[]): Promise<void> {
    const at = this.deps.clock().toISOString();
    const events = groups.flatMap((group) => {
      // The search read these from the pool a moment ago; only a purge since can have removed one.
      const inPool = new Set(this.deps.queries.idsOfPool(group.pool, group.ids));
      return decideRecordReferences({ context: { ...group, at, newEventId }, ids: group.ids }, inPool);
    });
    if (events.length > 0) await this.commit(events);
  }

  /** Acknowledged or in-flight state of an id. */
  private current(id: string): MemoryEntry | undefined {
    const slot = this.inFlight.get(id);
    return slot ? slot.entry : this.deps.queries.get(id);
  }

  private acknowledged(pool: string, id: string): MemoryEntry {
    const entry = this.deps.queries.get(id);
    if (!entry || entry.pool !== pool) throw notFound(pool, id);
    return entry;
  }

  /** The acknowledged entry once no write of it is in flight (a retried store waits for the first). */
  private async settled(id: string): Promise<MemoryEntry> {
    while (this.inFlight.has(id)) await new Promise((resolve) => setImmediate(resolve));
    const entry = this.deps.queries.get(id);
    if (!entry) throw new MemoryError('not_found', `memory ${id} not found`);
    return entry;
  }

  private freshId(): string {
    return this.freshIds.take((id) => this.inFlight.has(id));
  }
}

/** Runs a domain decision; a write rule's refusal is answered as the MemoryError of the same code and message. */
function decided<T>(decide: () => T): T {
  try {
    return decide();
  } catch (error) {
    if (error instanceof WriteRejection) throw new MemoryError(error.code, error.message);
    throw error;
  }
}

function requiredId(id: unknown): string {
  if (typeof id !== 'string' || id === '') throw invalid('id must be a non-empty string');
  return id;
}

function fromJulianDay(day: number): Date {
  return new Date((day - 2_440_587.5) * DAY_MS);
}

function defaultType(category: string | null): 'USER' | 'MEMORY' {
  return category === 'preference' || category === 'person' ? 'USER' : 'MEMORY';
}

function nonNullCategory(category: unknown) {
  const valid = validCategory(category);
  if (valid === null) throw invalid('category filter must be a category');
  return valid;
}
