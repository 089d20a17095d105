import type Database from 'better-sqlite3-multiple-ciphers';
import { effectiveConfidence, type Category, type MemoryEntry, type MemoryType } from '@engram/domain';
import { LexicalSearch, type LexicalHit, type LexicalQuery } from '../reads/lexical-search.js';
import { pageStatement, type PageQuery, type PageRow, type PageStatementRow } from './memory-page-query.js';
import { toEntry, type MemoryRow } from './memory-row.js';
import { readPoolStats, type PoolStats } from './pool-stats.js';

export interface ListQuery {
  readonly pool: string;
  readonly category?: Category;
  readonly type?: MemoryType;
  readonly archived: boolean;
  readonly limit: number;
  readonly offset?: number;
}

export interface SearchQuery extends LexicalQuery {
  /** How many of the best ranked to return. */
  readonly limit: number;
  /** For effective confidence, the tie-breaker. */
  readonly now: Date;
}

/** A ranked match: the entry, its lexical score (see LexicalSearch) and its effective confidence now. */
export interface SearchMatch {
  readonly entry: MemoryEntry;
  readonly score: number;
  readonly effectiveConfidence: number;
}

/** Tier 1 looks at most at this many of a pool's eligible entries (by stored confidence). */
const TIER1_CANDIDATE_LIMIT = 2000;

/** What the projection's tables answer: entries by id, list, page, search, Tier 1 candidates, counts. */
export class MemoryQueries {
  private readonly statements;
  private readonly pageStatements = new Map<string, Database.Statement<Record<string, unknown>, PageStatementRow>>();
  private readonly lexical: LexicalSearch;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      byId: db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE id = ?'),
      // One statement for many ids (each statement is a read transaction of its own, which costs more
      // than the row lookup), and without `pool` in the WHERE clause: given it, the planner walks the
      // whole pool's index.
      poolsOfIds: db.prepare<[string], { id: string; pool: string }>('SELECT id, pool FROM memories WHERE id IN (SELECT value FROM json_each(?))'),
      poolSeq: db.prepare<[string], { last_seq: number }>('SELECT last_seq FROM pools WHERE pool = ?'),
      pools: db.prepare<[], { pool: string }>('SELECT pool FROM pools ORDER BY pool'),
      activeCount: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM memories WHERE pool = ? AND is_archived = 0'),
      count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM memories'),
      activeOfPool: db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE pool = ? AND is_archived = 0 ORDER BY created_at, rowid'),
      ofPool: db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE pool = ? ORDER BY created_at, id'),
      tier1Candidates: db.prepare<[string, number], MemoryRow>(
        `SELECT * FROM memories WHERE pool = ? AND is_archived = 0
           AND (type = 'USER' OR category IN ('preference', 'person', 'environment', 'project'))
           AND (category IS NULL OR category NOT IN ('decision', 'gotcha'))
         ORDER BY confidence DESC, created_at, id LIMIT ?`,
      ),
      byRowids: db.prepare<[string], MemoryRow & { search_rowid: number }>(
        'SELECT rowid AS search_rowid, * FROM memories WHERE rowid IN (SELECT value FROM json_each(?))',
      ),
      byConfidence: db.prepare<[string, number, string | null, string | null, number], MemoryRow>(
        `SELECT * FROM memories WHERE pool = ? AND (? = 1 OR is_archived = 0) AND (? IS NULL OR category = ?)
         ORDER BY confidence DESC, created_at DESC, id LIMIT ?`,
      ),
    };
    this.lexical = new LexicalSearch(db);
  }

  get(id: string): MemoryEntry | undefined {
    const row = this.statements.byId.get(id);
    return row ? toEntry(row) : undefined;
  }

  /** Those of `ids` that are entries of any pool. */
  storedIds(ids: readonly string[]): Set<string> {
    if (ids.length === 0) return new Set();
    return new Set(this.statements.poolsOfIds.all(JSON.stringify(ids)).map((row) => row.id));
  }

  /** Those of `ids` that are entries of `pool`. */
  idsOfPool(pool: string, ids: readonly string[]): string[] {
    if (ids.length === 0) return [];
    return this.statements.poolsOfIds
      .all(JSON.stringify(ids))
      .filter((row) => row.pool === pool)
      .map((row) => row.id);
  }

  list(query: ListQuery): MemoryEntry[] {
    const where = ['pool = @pool', 'is_archived = @archived'];
    if (query.category) where.push('category = @category');
    if (query.type) where.push('type = @type');
    const rows = this.db
      .prepare<Record<string, unknown>, MemoryRow>(
        `SELECT * FROM memories WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id LIMIT @limit OFFSET @offset`,
      )
      .all({
        pool: query.pool,
        archived: query.archived ? 1 : 0,
        category: query.category,
        type: query.type,
        limit: query.limit,
        offset: query.offset ?? 0,
      });
    return rows.map(toEntry);
  }

  /** One page of a pool's entries in sort order, keyset-paged (see memory-page-query.ts). */
  page(query: PageQuery): PageRow[] {
    const { sql, parameters } = pageStatement(query);
    let statement = this.pageStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.pageStatements.set(sql, statement);
    }
    return statement.all(parameters).map((row) => ({ entry: toEntry(row), key: row.page_key, rowid: row.page_rowid }));
  }

  /**
   * Full-text search: the pool's entries ranked by LexicalSearch, best first; among equal scores
   * the entry with the higher effective confidence, then the older one. Confidence only breaks
   * ties: a multiplier would let a fresh partial match bury an old entry that answers the query.
   */
  search(query: SearchQuery): SearchMatch[] {
    const ranked = this.lexical.rank(query);
    const last = ranked[Math.min(query.limit, ranked.length) - 1];
    if (!last) return [];
    const contenders = ranked.filter((hit) => hit.score >= last.score);
    const rows = new Map(this.statements.byRowids.all(JSON.stringify(contenders.map((hit) => hit.rowid))).map((row) => [row.search_rowid, row]));
    const matches: (SearchMatch & { readonly rowid: number })[] = [];
    for (const hit of contenders) {
      const row = rows.get(hit.rowid);
      if (!row) continue;
      const entry = toEntry(row);
      matches.push({ entry, score: hit.score, effectiveConfidence: effectiveConfidence(entry, query.now), rowid: hit.rowid });
    }
    return matches
      .sort((a, b) => b.score - a.score || b.effectiveConfidence - a.effectiveConfidence || a.rowid - b.rowid)
      .slice(0, query.limit)
      .map(({ entry, score, effectiveConfidence }) => ({ entry, score, effectiveConfidence }));
  }

  /** The pool's best `limit` entries for the terms by lexical relevance alone, with scores: for fusing with other rankings. */
  lexicalSearch(query: LexicalQuery, limit: number): LexicalHit[] {
    return this.lexical.search(query, limit);
  }

  /** Entries by stored confidence, for a search without words. */
  byConfidence(pool: string, includeArchived: boolean, category: Category | undefined, limit: number): MemoryEntry[] {
    return this.statements.byConfidence.all(pool, includeArchived ? 1 : 0, category ?? null, category ?? null, limit).map(toEntry);
  }

  tier1Candidates(pool: string): MemoryEntry[] {
    return this.statements.tier1Candidates.all(pool, TIER1_CANDIDATE_LIMIT).map(toEntry);
  }

  activeEntries(pool: string): MemoryEntry[] {
    return this.statements.activeOfPool.all(pool).map(toEntry);
  }

  /** Every entry of a pool, archived ones too, oldest first. */
  entriesOfPool(pool: string): MemoryEntry[] {
    return this.statements.ofPool.all(pool).map(toEntry);
  }

  activeCount(pool: string): number {
    return this.statements.activeCount.get(pool)?.n ?? 0;
  }

  /** Entries of every pool, archived ones too. */
  count(): number {
    return this.statements.count.get()?.n ?? 0;
  }

  /** Last seq of an event about this pool (0 when none). */
  poolSeq(pool: string): number {
    return this.statements.poolSeq.get(pool)?.last_seq ?? 0;
  }

  pools(): string[] {
    return this.statements.pools.all().map((row) => row.pool);
  }

  *allEntries(): Generator<MemoryEntry> {
    // A statement of its own: two walks may be under way at once.
    for (const row of this.db.prepare<[], MemoryRow>('SELECT * FROM memories ORDER BY id').iterate()) yield toEntry(row);
  }

  stats(): PoolStats[] {
    return readPoolStats(this.db, this.pools());
  }
}
