import {
  MemoryError,
  MemoryPattern,
  parseMemoryRequest,
  type CategorizeRequest,
  type ConfirmRequest,
  type ConsolidateRequest,
  type ConsolidateResponse,
  type DecaySweepRequest,
  type DecaySweepResponse,
  type EventsAfterRequest,
  type EventsPage,
  type EventsRequest,
  type GetRequest,
  type IdRequest,
  type ListRequest,
  type PageRequest,
  type PageResponse,
  type PoolRequest,
  type RefreshRequest,
  type SearchHit,
  type SearchRequest,
  type StatsResponse,
  type StoreRequest,
  type StoreResponse,
  type Tier1PlanResponse,
  type Tier1Response,
  type UpdateRequest,
} from '@engram/contracts';
import {
  decideArchive,
  decideCategorize,
  decideConfirm,
  decideConsolidate,
  decideDecaySweep,
  decideDelete,
  decidePurge,
  decideRefresh,
  decideRestore,
  decideStore,
  decideUpdate,
  type MemoryEntry,
  type MemoryEvent,
  type NewEvent,
  type WriteContext,
} from '@engram/domain';
import type { CommitFeed } from './commit-feed.js';
import { assertSameStore, storedFields } from './idempotency.js';
import { newMemoryId } from './ids.js';
import { PurgesInFlight } from './purges-in-flight.js';
import { textFingerprint } from '../projection/purge-tombstones.js';
import type { MemoryServiceDeps } from './memory-service-deps.js';
import { MemoryReads } from '../reads/memory-reads.js';
import type { ReferenceBatcher } from './reference-batcher.js';
import { sameFactInPool } from './same-fact-in-pool.js';
import { searchReferences } from './search-references.js';
import { Tier1Blocks } from '../reads/tier1-blocks.js';
import { DiskFull, type DiskFullState } from '../data-dir/disk-full.js';
import { isOutOfSpace, messageOf } from '../data-dir/out-of-space.js';
import { validPool } from './validation.js';
import type { VectorService } from '../vectors/vector-service.js';
import { WritePipeline } from './write-pipeline.js';
import { decidingAgain } from './deciding-again.js';
import { decided, mergesOf, storeFieldsOf, updateFieldsOf, writeContextOf } from './write-requests.js';

export type { MemoryServiceDeps } from './memory-service-deps.js';

/** Pages of 1,000 events read of a purged entry's history for its texts (its references are most of it). */
const MAX_HISTORY_PAGES = 20;

/**
 * The memory operations, as the RPC controller calls them. Each request is parsed here, where it
 * enters memory whoever the caller (parseMemoryRequest: its schema in @engram/contracts). A write: parse -> decide
 * in the domain against the current state (acknowledged plus in flight) -> the write pipeline
 * (log, database, commit feed, flat files) -> answer. A read: the queries, from the database.
 */
export class MemoryService {
  private readonly pipeline: WritePipeline;
  private readonly reads: MemoryReads;
  private readonly tier1Blocks: Tier1Blocks;
  private readonly references: ReferenceBatcher;
  private readonly purging = new PurgesInFlight();
  private readonly diskFull: DiskFull;
  /** Purged ids whose content the log still holds: the redaction found the disk full. */
  private readonly unredacted = new Set<string>();
  private closing: Promise<void> | null = null;

  /** Every applied batch, in seq order (see CommitFeed). */
  readonly commits: Pick<CommitFeed, 'subscribe'>;
  /** The worker's vector RPCs; null when hybrid search is off. */
  readonly vectors: VectorService | null;

  constructor(private readonly deps: MemoryServiceDeps) {
    this.commits = deps.commits;
    this.diskFull = new DiskFull({
      dir: deps.dataDir ?? '.',
      heal: () => this.heal(),
      logger: deps.logger,
      clock: deps.clock,
      ...(deps.diskFullRetryMs ? { retryMs: deps.diskFullRetryMs } : {}),
    });
    this.pipeline = new WritePipeline({ ...deps, diskFull: this.diskFull, newId: deps.newId ?? newMemoryId });
    this.vectors = deps.vectors?.onDisk(this.diskFull) ?? null;
    if (deps.startedFull) this.diskFull.enter(deps.startedFull);
    this.references = searchReferences({ ...deps, pipeline: this.pipeline, writesRefused: () => this.diskFull.current !== null });
    this.reads = new MemoryReads({ ...deps, recordHits: (...hits) => this.references.add(...hits) });
    this.tier1Blocks = new Tier1Blocks({ queries: deps.queries, clock: deps.clock, maxChars: deps.tier1MaxChars });
    deps.replica?.follow((events) => this.applyForeign(events));
  }

  // ---- writes: parse the request, decide in the domain, write through the pipeline ----

  async store(raw: StoreRequest): Promise<StoreResponse> {
    return this.onCurrentState(() => this.storeOnce(raw));
  }

  private async storeOnce(raw: StoreRequest): Promise<StoreResponse> {
    const request = parseMemoryRequest(MemoryPattern.Store, raw);
    const context = this.writeContext(request);
    const fields = storeFieldsOf(request, context);
    const atChosenId = fields.chosenId === undefined ? undefined : this.pipeline.current(fields.chosenId);
    // Only a store that would write looks for the same fact (a search of the pool).
    const sameFact = fields.dedupe && !atChosenId ? sameFactInPool(this.deps.queries, context.pool, fields.content) : null;
    const purged = {
      chosenId: fields.chosenId !== undefined && (this.purging.hasId(fields.chosenId) || this.deps.tombstones.isPurged(fields.chosenId)),
      text: this.purging.forbids(context.pool, fields.content) || this.deps.tombstones.forbids(context.pool, fields.content),
    };
    const decision = decided(() => decideStore({ context, ...fields, freshId: () => this.pipeline.freshId() }, { atChosenId, sameFact, purged }));
    switch (decision.outcome) {
      case 'retried':
        if (request.id === undefined && request.idempotencyKeyBindsRequest === true) {
          // The first request is the entry's memory.stored event; while that is still in flight, the entry it is making.
          const first = storedFields(this.reads.events({ pool: context.pool, after: 0, memoryId: decision.id, limit: 1 }).data[0]) ?? atChosenId;
          assertSameStore(first, fields);
        }
        return this.settled(decision.id);
      case 'said-again':
        await this.pipeline.write(decision.events);
        return { ...this.reads.acknowledged(context.pool, decision.id), existing: true };
      case 'stored': {
        // The id was just found unused (chosen and absent, or fresh): no need to read it again while tracking.
        const changes = await this.pipeline.write(decision.events, decision.id);
        // The stored entry is exactly what the event says (the projection applies the same changesOf).
        return changes.get(decision.id) ?? this.reads.acknowledged(context.pool, decision.id);
      }
    }
  }

  async update(raw: UpdateRequest): Promise<MemoryEntry> {
    const request = parseMemoryRequest(MemoryPattern.Update, raw);
    return this.onEntry(request, (context, id, entry) => decideUpdate({ context, id, ...updateFieldsOf(request) }, entry));
  }

  async delete(raw: IdRequest): Promise<MemoryEntry> {
    const request = parseMemoryRequest(MemoryPattern.Delete, raw);
    return this.onEntry(request, (context, id, entry) => decideDelete({ context, id, reason: request.reason }, entry));
  }

  /** Asked by a person, or by the decay sweep (worker:decay) once an entry's effective confidence fell below the threshold. */
  async archive(raw: IdRequest): Promise<MemoryEntry> {
    const request = parseMemoryRequest(MemoryPattern.Archive, raw);
    return this.onEntry(request, (context, id, entry) => decideArchive({ context, id, reason: request.reason }, entry));
  }

  async restore(raw: IdRequest): Promise<MemoryEntry> {
    const request = parseMemoryRequest(MemoryPattern.Restore, raw);
    return this.onEntry(request, (context, id, entry) => decideRestore({ context, id }, entry));
  }

  async confirm(raw: ConfirmRequest): Promise<MemoryEntry> {
    const request = parseMemoryRequest(MemoryPattern.Confirm, raw);
    return this.onEntry(request, (context, id, entry) => decideConfirm({ context, id, confirmed: request.confirmed }, entry));
  }

  async categorize(raw: CategorizeRequest): Promise<MemoryEntry> {
    const request = parseMemoryRequest(MemoryPattern.Categorize, raw);
    return this.onEntry(request, (context, id, entry) => decideCategorize({ context, id, category: request.category }, entry));
  }

  /**
   * Forgets for real: the row, its FTS terms and flat-file lines go, and the log lines that carried it
   * are redacted. The purge records what it forbids from then on (the id, and the fingerprints of every
   * text the entry had), and forbids it while it is in flight too.
   */
  async purge(raw: IdRequest): Promise<{ readonly id: string; readonly purged: true }> {
    return this.onCurrentState(() => this.purgeOnce(raw));
  }

  private async purgeOnce(raw: IdRequest): Promise<{ readonly id: string; readonly purged: true }> {
    const request = parseMemoryRequest(MemoryPattern.Purge, raw);
    const context = this.writeContext(request);
    const id = request.id;
    const current = this.pipeline.current(id);
    const forbids = current?.pool === context.pool ? this.fingerprintsOf(context.pool, current) : [];
    const events = decided(() => decidePurge({ context, id, forbids }, current));
    const release = this.purging.add(context.pool, id, forbids);
    try {
      await this.pipeline.write(events);
    } finally {
      release();
    }
    try {
      await this.deps.log.redact(new Set([id]));
      this.deps.projection.scrub();
    } catch (error) {
      if (!isOutOfSpace(error)) throw error;
      // The purge is durable and applied; its redaction is finished by the heal (or the next start).
      this.unredacted.add(id);
      this.diskFull.enter(error);
      throw new MemoryError(
        'unavailable',
        `the data disk is full (${messageOf(error)}): the purge is stored and the entry is gone from memory; its text leaves the event log once space is freed`,
      );
    }
    const removed = this.deps.removeStaleCopies?.() ?? [];
    if (removed.length > 0) this.deps.logger.warn({ files: removed }, 'purge deleted databases moved aside at start, which still held the entry');
    return { id, purged: true };
  }

  async refresh(raw: RefreshRequest): Promise<MemoryEntry[]> {
    return this.onCurrentState(() => this.refreshOnce(raw));
  }

  private async refreshOnce(raw: RefreshRequest): Promise<MemoryEntry[]> {
    const request = parseMemoryRequest(MemoryPattern.Refresh, raw);
    const context = this.writeContext(request);
    const decision = decided(() => decideRefresh({ context, ids: request.ids }, (id) => this.pipeline.current(id)));
    await this.pipeline.write(decision.events);
    return decision.ids.map((id) => this.reads.acknowledged(context.pool, id));
  }

  async consolidate(raw: ConsolidateRequest): Promise<ConsolidateResponse> {
    return this.onCurrentState(() => this.consolidateOnce(raw));
  }

  private async consolidateOnce(raw: ConsolidateRequest): Promise<ConsolidateResponse> {
    const request = parseMemoryRequest(MemoryPattern.Consolidate, raw);
    const context = this.writeContext(request);
    const merges = mergesOf(request, () => this.pipeline.freshId());
    const decision = decided(() => decideConsolidate({ context, model: request.model, merges }, (id) => this.pipeline.current(id)));
    await this.pipeline.write(decision.events);
    return { created: decision.created.map((id) => this.reads.acknowledged(context.pool, id)), archived: decision.archived };
  }

  /**
   * The decay sweep of a pool (worker:decay): one decision over its active entries, as acknowledged
   * or in flight, and its archive events written together: one durable append, one render of the
   * pool's files. References searches have recorded but not yet written go first, so a search made
   * just before the sweep still counts as a use.
   */
  async decaySweep(raw: DecaySweepRequest): Promise<DecaySweepResponse> {
    return this.onCurrentState(() => this.decaySweepOnce(raw));
  }

  private async decaySweepOnce(raw: DecaySweepRequest): Promise<DecaySweepResponse> {
    const request = parseMemoryRequest(MemoryPattern.DecaySweep, raw);
    const context = this.writeContext(request);
    const asOf = new Date(request.asOf ?? context.at);
    await this.references.flush();
    // Rows as the database has them, but as in flight for the few entries a write is changing.
    const entries = this.deps.queries
      .activeEntries(context.pool)
      .flatMap((entry) => (this.pipeline.isInFlight(entry.id) ? (this.pipeline.current(entry.id) ?? []) : [entry]));
    const decision = decideDecaySweep({ context, asOf }, entries);
    if (decision.events.length > 0) await this.pipeline.write(decision.events);
    return { pool: context.pool, asOf: asOf.toISOString(), examined: decision.examined, archived: decision.archived };
  }

  // ---- reads (see MemoryReads, Tier1Blocks) ----

  async get(request: GetRequest): Promise<MemoryEntry> {
    await this.readYourWrites();
    return this.reads.get(parseMemoryRequest(MemoryPattern.Get, request));
  }

  async list(request: ListRequest): Promise<MemoryEntry[]> {
    await this.readYourWrites();
    return this.reads.list(parseMemoryRequest(MemoryPattern.List, request));
  }

  async page(request: PageRequest): Promise<PageResponse> {
    await this.readYourWrites();
    return this.reads.page(parseMemoryRequest(MemoryPattern.Page, request));
  }

  async search(request: SearchRequest): Promise<SearchHit[]> {
    await this.readYourWrites();
    return this.reads.search(parseMemoryRequest(MemoryPattern.Search, request));
  }

  async tier1(request: PoolRequest): Promise<Tier1Response> {
    await this.readYourWrites();
    return this.tier1Blocks.block(parseMemoryRequest(MemoryPattern.Tier1, request).pool);
  }

  async tier1Plan(request: PoolRequest): Promise<Tier1PlanResponse> {
    return this.tier1Blocks.plan(parseMemoryRequest(MemoryPattern.Tier1Plan, request).pool);
  }

  async stats(_request: Record<string, never> = {}): Promise<StatsResponse> {
    await this.readYourWrites();
    return this.reads.stats();
  }

  async eventsAfter(request: EventsAfterRequest): Promise<MemoryEvent[]> {
    return this.reads.eventsAfter(parseMemoryRequest(MemoryPattern.EventsAfter, request));
  }

  async events(request: EventsRequest): Promise<EventsPage> {
    await this.readYourWrites();
    return this.reads.events(parseMemoryRequest(MemoryPattern.Events, request));
  }

  /** `diskFull`: writes are refused until the data disk has room again (see DiskFull); reads go on. */
  async ping(
    _request: Record<string, never> = {},
  ): Promise<{ readonly ok: true; readonly lastSeq: number; readonly diskFull: DiskFullState | null }> {
    return { ok: true, lastSeq: this.deps.projection.lastSeq, diskFull: this.diskFull.current };
  }

  // ---- the outbox's cursor, and lifecycle ----

  dispatchedSeq(): number {
    return this.deps.outboxCursor.dispatchedSeq();
  }

  markDispatched(seq: number): void {
    this.deps.outboxCursor.markDispatched(seq);
    // Shared with the other replicas, so a new one does not hand the jobs of the whole history to Redis again.
    this.deps.replica?.noteDispatched(seq).catch(() => undefined);
  }

  activeCount(pool: string): number {
    return this.deps.queries.activeCount(validPool(pool));
  }

  /** Once close() is called: the service answers nothing more. */
  get closed(): boolean {
    return this.closing !== null;
  }

  /** Writes pending references, waits for queued writes, closes the log and database, releases the data dir. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.diskFull.close();
      await this.references.flush();
      await this.pipeline.drain();
      await this.deps.log.close();
      await this.deps.checkpointer?.stop();
      this.deps.projection.close();
      this.deps.lock?.release();
    })();
    return this.closing;
  }

  // ---- internals ----

  /**
   * Runs a write command (decided again while other replicas write to its pool in between) on a state
   * that holds every write acknowledged anywhere before it came: an update of an entry another replica
   * has just stored finds it, and a dedupe sees the fact stored there.
   */
  private async onCurrentState<T>(command: () => Promise<T>): Promise<T> {
    await this.readYourWrites();
    return decidingAgain(command);
  }

  /**
   * With other replicas on the same event store: waits (bounded) until this replica has applied
   * every write acknowledged anywhere before this read; the event store not answering, or a replica
   * too far behind, reads what it has (memory fails open).
   */
  private async readYourWrites(): Promise<void> {
    if (!this.deps.replica) return;
    await this.deps.replica.caughtUp(this.deps.readYourWritesMs ?? 2_000);
  }

  /** Events another replica committed: applied as this replica's own, and a purge among them scrubs the database. */
  private applyForeign(events: readonly MemoryEvent[]): void {
    try {
      this.pipeline.applyForeign(events);
      if (events.some((event) => event.type === 'memory.purged')) this.deps.projection.scrub();
    } catch (error) {
      this.deps.logger.error({ err: error }, "applying another replica's events failed");
    }
  }

  /**
   * After the disk was full: the database takes the durable events it missed, the flat files are
   * rendered again, and purges finish their redaction. Throws (and is tried again later) while the
   * disk still has no room.
   */
  private async heal(): Promise<void> {
    this.deps.shareDatabase?.();
    await this.pipeline.drain();
    this.pipeline.applyMissed(this.deps.log.eventsAfter(this.deps.projection.lastSeq));
    await Promise.all(this.deps.queries.pools().map((pool) => this.deps.flatFiles.refresh(pool)));
    await this.deps.log.redactPending();
    if (this.unredacted.size > 0) {
      await this.deps.log.redact(new Set(this.unredacted));
      this.unredacted.clear();
      this.deps.projection.scrub();
    }
  }

  /** Fingerprints of every text an entry had: its stored, updated and merged contents (from its history) and its current one. */
  private fingerprintsOf(pool: string, entry: MemoryEntry): string[] {
    const texts = new Set([entry.content]);
    let cursor: string | undefined;
    for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
      const events = this.reads.events({ pool, after: 0, memoryId: entry.id, limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const event of events.data) {
        if (
          (event.type === 'memory.stored' || event.type === 'memory.consolidated' || event.type === 'memory.updated') &&
          event.data.id === entry.id
        ) {
          if (typeof event.data.content === 'string') texts.add(event.data.content);
        }
      }
      if (events.nextCursor === null) break;
      cursor = events.nextCursor;
    }
    return [...texts].map((text) => textFingerprint(pool, text)).filter((fingerprint): fingerprint is string => fingerprint !== undefined);
  }

  private writeContext(request: Parameters<typeof writeContextOf>[0]): WriteContext {
    if (this.closing) throw new MemoryError('unavailable', 'memory service is shutting down');
    return writeContextOf(request, this.deps.clock());
  }

  /**
   * A command about one entry: the parsed request decided against the entry's current state,
   * written, and answered with the entry as acknowledged once no write of it is in flight.
   */
  private async onEntry(
    request: Parameters<typeof writeContextOf>[0] & { readonly id: string },
    decide: (context: WriteContext, id: string, entry: MemoryEntry | undefined) => readonly NewEvent[],
  ): Promise<MemoryEntry> {
    return this.onCurrentState(async () => {
      const context = this.writeContext(request);
      const id = request.id;
      const events = decided(() => decide(context, id, this.pipeline.current(id)));
      if (events.length > 0) await this.pipeline.write(events);
      return this.settled(id);
    });
  }

  /** The acknowledged entry once no write of it is in flight (a retried store waits for the first). */
  private async settled(id: string): Promise<MemoryEntry> {
    await this.pipeline.settled(id);
    const entry = this.deps.queries.get(id);
    if (!entry) throw new MemoryError('not_found', `memory ${id} not found`);
    return entry;
  }
}
