import type {
  EventsAfterRequest,
  EventsPage,
  EventsRequest,
  GetRequest,
  ListRequest,
  PageRequest,
  PageResponse,
  SearchHit,
  SearchRequest,
  StatsResponse,
} from '@engram/contracts';
import { DAY_MS, effectiveConfidence, type Actor, type MemoryEntry, type MemoryEvent } from '@engram/domain';
import type { EventIndex } from '../projection/event-index.js';
import type { EventStore } from '../event-log/event-store.js';
import { EventPages } from './event-pages.js';
import type { HybridSearch } from '../vectors/hybrid-search.js';
import { julianDay } from './julian-day.js';
import { decodeCursor, encodeCursor } from './page-cursor.js';
import type { MemoryQueries } from '../projection/memory-queries.js';
import type { Projection } from '../projection/projection.js';
import { searchTerms } from './search-query.js';
import {
  invalid,
  notFound,
  validActor,
  validCategory,
  validLimit,
  validOffset,
  validPageFilters,
  validPool,
  validQuery,
  validType,
} from '../writes/validation.js';

export interface MemoryReadsDeps {
  readonly queries: Pick<MemoryQueries, 'get' | 'list' | 'page' | 'byConfidence' | 'search' | 'stats'>;
  readonly projection: Pick<Projection, 'lastSeq'>;
  readonly log: Pick<EventStore, 'read' | 'readSeqs'>;
  /** Which events belong to which pool and entry (the projection's). */
  readonly eventIndex: Pick<EventIndex, 'seqs'>;
  /** Set when an embeddings endpoint is configured: searches with words fuse meaning with words. */
  readonly hybrid?: Pick<HybridSearch, 'search'>;
  readonly clock: () => Date;
  /** A search asked to record what it returned as referenced (written in the background). */
  readonly recordHits: (pool: string, ids: readonly string[], actor: Actor, causationId: string | null) => void;
}

const SEARCH_DEFAULT_LIMIT = 10;
const SEARCH_MAX_LIMIT = 100;
const LIST_DEFAULT_LIMIT = 50;
const LIST_MAX_LIMIT = 1000;
const PAGE_MAX_LIMIT = 500;

/** The reads: they answer from the database (and the log for events), i.e. only acknowledged state. */
export class MemoryReads {
  private readonly eventPages: EventPages;

  constructor(private readonly deps: MemoryReadsDeps) {
    this.eventPages = new EventPages({ log: deps.log, index: deps.eventIndex });
  }

  get(request: GetRequest): MemoryEntry {
    const pool = validPool(request.pool);
    if (typeof request.id !== 'string') throw invalid('id must be a string');
    return this.acknowledged(pool, request.id);
  }

  /** The acknowledged entry `id` of the pool. */
  acknowledged(pool: string, id: string): MemoryEntry {
    const entry = this.deps.queries.get(id);
    if (!entry || entry.pool !== pool) throw notFound(pool, id);
    return entry;
  }

  list(request: ListRequest): MemoryEntry[] {
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
  page(request: PageRequest): PageResponse {
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
   * effective confidence. With `recordReference`, the returned ids are recorded as
   * memory.referenced in the background (the answer never waits for that fsync; see ReferenceBatcher).
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
      this.deps.recordHits(
        pool,
        hits.map((hit) => hit.entry.id),
        actor,
        request.requestId ?? null,
      );
    }
    return hits;
  }

  stats(): StatsResponse {
    return { lastSeq: this.deps.projection.lastSeq, pools: this.deps.queries.stats() };
  }

  eventsAfter(request: EventsAfterRequest): MemoryEvent[] {
    return this.eventPages.after(request);
  }

  /** A page of a pool's events, or of one entry's history (see EventPages). */
  events(request: EventsRequest): EventsPage {
    return this.eventPages.page(request);
  }
}

function fromJulianDay(day: number): Date {
  return new Date((day - 2_440_587.5) * DAY_MS);
}

function nonNullCategory(category: unknown) {
  const valid = validCategory(category);
  if (valid === null) throw invalid('category filter must be a category');
  return valid;
}
