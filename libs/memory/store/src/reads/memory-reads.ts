import type { EventsPage, MemoryPattern, PageResponse, ParsedRequest, SearchHit, StatsResponse } from '@engram/contracts';
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
import { notFound } from '../writes/validation.js';

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

/** The reads, of parsed requests: they answer from the database (and the log for events), i.e. only acknowledged state. */
export class MemoryReads {
  private readonly eventPages: EventPages;

  constructor(private readonly deps: MemoryReadsDeps) {
    this.eventPages = new EventPages({ log: deps.log, index: deps.eventIndex });
  }

  get(request: ParsedRequest<typeof MemoryPattern.Get>): MemoryEntry {
    return this.acknowledged(request.pool, request.id);
  }

  /** The acknowledged entry `id` of the pool. */
  acknowledged(pool: string, id: string): MemoryEntry {
    const entry = this.deps.queries.get(id);
    if (!entry || entry.pool !== pool) throw notFound(pool, id);
    return entry;
  }

  list(request: ParsedRequest<typeof MemoryPattern.List>): MemoryEntry[] {
    return this.deps.queries.list({
      pool: request.pool,
      ...(request.category !== undefined ? { category: request.category } : {}),
      ...(request.type !== undefined ? { type: request.type } : {}),
      archived: request.archived === true,
      limit: request.limit,
      offset: request.offset,
    });
  }

  /** A page of a pool's entries for a person browsing them, keyset-paged (see Projection.page). */
  page(request: ParsedRequest<typeof MemoryPattern.Page>): PageResponse {
    const { pool, limit, cursor } = request;
    const filters = {
      sort: request.sort,
      archived: request.archived,
      ...(request.type !== undefined ? { type: request.type } : {}),
      ...(request.category !== undefined ? { category: request.category } : {}),
      ...(request.confirmed !== undefined ? { confirmed: request.confirmed } : {}),
      ...(request.source !== undefined ? { source: request.source } : {}),
    };
    const after = cursor === undefined || cursor === null ? undefined : decodeCursor(cursor, filters.sort);
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
  async search(request: ParsedRequest<typeof MemoryPattern.Search>): Promise<SearchHit[]> {
    const { pool, query, limit, category, actor } = request;
    const includeArchived = request.includeArchived === true;
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

  eventsAfter(request: ParsedRequest<typeof MemoryPattern.EventsAfter>): MemoryEvent[] {
    return this.eventPages.after(request);
  }

  /** A page of a pool's events, or of one entry's history (see EventPages). */
  events(request: ParsedRequest<typeof MemoryPattern.Events>): EventsPage {
    return this.eventPages.page(request);
  }
}

function fromJulianDay(day: number): Date {
  return new Date((day - 2_440_587.5) * DAY_MS);
}
