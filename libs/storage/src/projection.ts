import { existsSync, renameSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import {
  CATEGORIES,
  affectedIds,
  changesOf,
  decayRate,
  effectiveConfidence,
  type Category,
  type MemoryEntry,
  type MemoryEvent,
  type MemorySource,
  type MemoryType,
} from '@engram/domain';
import type { PageSort } from '@engram/contracts';
import { EventIndex } from './event-index.js';
import { MEMORY_COLUMNS, toEntry, toRow, type MemoryRow } from './memory-row.js';
import { readPoolStats, type PoolStats } from './pool-stats.js';
import { SCHEMA_SQL, SCHEMA_VERSION } from './schema.js';
import { LexicalSearch, type LexicalHit, type LexicalQuery } from './lexical-search.js';

export interface ListQuery {
  readonly pool: string;
  readonly category?: Category;
  readonly type?: MemoryType;
  readonly archived: boolean;
  readonly limit: number;
  readonly offset?: number;
}

export interface PageQuery {
  readonly pool: string;
  readonly sort: PageSort;
  readonly archived: boolean;
  readonly type?: MemoryType;
  readonly category?: Category;
  readonly confirmed?: boolean;
  readonly source?: MemorySource;
  readonly limit: number;
  /** Rows strictly after this one in the sort order (the previous page's last). */
  readonly after?: { readonly key: string | number; readonly rowid: number };
  /** Julian day of "now", for the confidence sort. */
  readonly today: number;
}

/** A page's rows and the sort key and rowid of each, from which the next cursor is made. */
export interface PageRow {
  readonly entry: MemoryEntry;
  readonly key: string | number;
  readonly rowid: number;
}

/** Sort keys of a page, descending; rowid breaks ties (the created_at index carries it). */
const PAGE_KEYS: Readonly<Record<PageSort, string>> = {
  created: 'created_at',
  last_used: "coalesce(last_referenced, '')",
  confidence: `confidence * pow(
    CASE category ${CATEGORIES.map((category, index) => `WHEN '${category}' THEN @rate${index}`).join(' ')} ELSE @rateNone END,
    max(0, @today - julianday(coalesce(last_referenced, created_at))))`,
};

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

/** The domain's decay rates, bound per category for the confidence sort of a page (see PAGE_KEYS). */
const DECAY_RATE_PARAMS: Readonly<Record<string, number>> = Object.fromEntries([
  ...CATEGORIES.map((category, index) => [`rate${index}`, decayRate(category)]),
  ['rateNone', decayRate(null)],
]);

/** One entry before and after an event (undefined: did not exist / was purged). */
export interface EntryChange {
  readonly before: MemoryEntry | undefined;
  readonly after: MemoryEntry | undefined;
}

/** Tier 1 looks at most at this many of a pool's eligible entries (by stored confidence). */
const TIER1_CANDIDATE_LIMIT = 2000;

/**
 * The SQLite projection of the log (WAL). Every event is applied through the domain's `changesOf`,
 * the same function `evolve` uses, so the database cannot disagree with the pure model; the one
 * exception, memory.referenced, is two counters written in SQL (see applyOne). `last_seq` is stored
 * in the same transaction as the changes: applying an event twice changes nothing.
 */
export class Projection {
  private readonly statements;
  private lastSeqValue: number;
  /** Which events belong to which pool and entry, kept in the same transactions as the entries. */
  readonly eventIndex: EventIndex;
  private readonly pageStatements = new Map<
    string,
    Database.Statement<Record<string, unknown>, MemoryRow & { page_key: string | number; page_rowid: number }>
  >();
  private readonly lexical: LexicalSearch;

  private constructor(readonly db: Database.Database) {
    this.eventIndex = new EventIndex(db);
    this.statements = {
      byId: db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE id = ?'),
      // One statement for many ids (each statement is a read transaction of its own, which costs more
      // than the row lookup), and without `pool` in the WHERE clause: given it, the planner walks the
      // whole pool's index.
      poolsOfIds: db.prepare<[string], { id: string; pool: string }>('SELECT id, pool FROM memories WHERE id IN (SELECT value FROM json_each(?))'),
      // Positional: binding fifteen named parameters costs a property lookup each, on every stored row.
      insert: db.prepare<[readonly unknown[]]>(
        `INSERT INTO memories (${MEMORY_COLUMNS.join(', ')}) VALUES (${MEMORY_COLUMNS.map(() => '?').join(', ')})`,
      ),
      // Two updates: naming `content` in SET fires the FTS trigger, so do it only when content changed.
      updateWithContent: db.prepare<[MemoryRow]>(
        `UPDATE memories SET type = @type, category = @category, content = @content, confidence = @confidence,
           updated_at = @updated_at, last_referenced = @last_referenced, reference_count = @reference_count,
           is_confirmed = @is_confirmed, is_archived = @is_archived, superseded_by = @superseded_by, supersedes = @supersedes
         WHERE id = @id`,
      ),
      // changesOf's memory.referenced, as one statement per id (see applyOne).
      reference: db.prepare<[string, string, string]>(
        'UPDATE memories SET last_referenced = ?, reference_count = reference_count + 1 WHERE id = ? AND pool = ?',
      ),
      updateWithoutContent: db.prepare<[Omit<MemoryRow, 'content'>]>(
        `UPDATE memories SET type = @type, category = @category, confidence = @confidence,
           updated_at = @updated_at, last_referenced = @last_referenced, reference_count = @reference_count,
           is_confirmed = @is_confirmed, is_archived = @is_archived, superseded_by = @superseded_by, supersedes = @supersedes
         WHERE id = @id`,
      ),
      delete: db.prepare<[string]>('DELETE FROM memories WHERE id = ?'),
      touchPool: db.prepare<[string, number]>(
        'INSERT INTO pools (pool, last_seq) VALUES (?, ?) ON CONFLICT (pool) DO UPDATE SET last_seq = excluded.last_seq',
      ),
      poolSeq: db.prepare<[string], { last_seq: number }>('SELECT last_seq FROM pools WHERE pool = ?'),
      getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare<[number, string]>('UPDATE meta SET value = ? WHERE key = ?'),
      activeCount: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM memories WHERE pool = ? AND is_archived = 0'),
      activeOfPool: db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE pool = ? AND is_archived = 0 ORDER BY created_at, rowid'),
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
    this.lastSeqValue = this.meta('last_seq');
    this.lexical = new LexicalSearch(db);
  }

  /** Opens an existing or new database file; throws when it cannot be opened or fails quick_check. */
  static open(path: string, options: { readonly bulk?: boolean } = {}): Projection {
    const db = new Database(path);
    try {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`quick_check: ${String(check)}`);
      db.pragma('journal_mode = WAL');
      // The log is the durable record; the projection can be rebuilt, so it need not fsync each commit.
      db.pragma(options.bulk ? 'synchronous = OFF' : 'synchronous = NORMAL');
      if (options.bulk) db.pragma('cache_size = -65536');
      // Purged content must not linger in free pages.
      db.pragma('secure_delete = ON');
      db.exec(SCHEMA_SQL);
      const version = db.prepare<[], { value: number }>("SELECT value FROM meta WHERE key = 'schema_version'").get();
      if (version?.value !== SCHEMA_VERSION) throw new Error(`schema version ${version?.value}, expected ${SCHEMA_VERSION}`);
      const projection = new Projection(db);
      if (projection.meta('fts_stale') === 1) projection.rebuildFullText();
      return projection;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * Opens the database; when it cannot be opened or fails its check, moves the file (and its WAL)
   * aside and starts an empty one, which the caller then fills from the log.
   */
  static openOrReset(path: string, logger: Logger): { projection: Projection; movedAside: string | null } {
    try {
      return { projection: Projection.open(path), movedAside: null };
    } catch (error) {
      const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
      }
      logger.error({ err: error, movedTo: aside }, 'database failed to open or its integrity check; moved it aside, rebuilding from the event log');
      return { projection: Projection.open(path), movedAside: aside };
    }
  }

  get lastSeq(): number {
    return this.lastSeqValue;
  }

  /** Applies events in one transaction; skips those already applied. Returns the entry changes made. */
  apply(events: readonly MemoryEvent[]): EntryChange[] {
    const applied: EntryChange[] = [];
    const poolSeqs = new Map<string, number>();
    try {
      this.db
        .transaction(() => {
          for (const event of events) {
            if (event.seq <= this.lastSeqValue) continue;
            if (event.seq !== this.lastSeqValue + 1) {
              throw new Error(`projection at seq ${this.lastSeqValue} cannot apply seq ${event.seq}: events are missing`);
            }
            this.applyOne(event, applied);
            poolSeqs.set(event.pool, event.seq);
            this.lastSeqValue = event.seq;
          }
          this.eventIndex.add(events);
          for (const [pool, seq] of poolSeqs) this.statements.touchPool.run(pool, seq);
          this.statements.setMeta.run(this.lastSeqValue, 'last_seq');
        })
        .immediate();
    } catch (error) {
      this.lastSeqValue = this.meta('last_seq');
      this.eventIndex.reload();
      throw error;
    }
    return applied;
  }

  private applyOne(event: MemoryEvent, applied: EntryChange[]): void {
    if (event.type === 'memory.referenced') {
      // Every search that records references makes one of these, so they are most of the log; read
      // no row and build no entry for them. Same effect as changesOf (each id once, only entries of
      // the event's pool), held to it by the replay property test; nothing a flat file shows changes.
      for (const id of new Set(event.data.ids)) this.statements.reference.run(event.at, id, event.pool);
      return;
    }
    const before = new Map<string, MemoryEntry | undefined>();
    for (const id of affectedIds(event)) before.set(id, this.get(id));
    const changes = changesOf(event, (id) => (before.has(id) ? before.get(id) : this.get(id)));
    for (const [id, after] of changes) {
      const previous = before.get(id);
      applied.push({ before: previous, after });
      if (!after) {
        if (previous) this.statements.delete.run(id);
      } else if (!previous) {
        const row = toRow(after);
        this.statements.insert.run(MEMORY_COLUMNS.map((column) => row[column]));
      } else if (after.content !== previous.content) {
        this.statements.updateWithContent.run(toRow(after));
      } else {
        const { content: _content, ...row } = toRow(after);
        this.statements.updateWithoutContent.run(row);
      }
    }
  }

  /** Those of `ids` that are entries of any pool. */
  storedIds(ids: readonly string[]): Set<string> {
    if (ids.length === 0) return new Set();
    return new Set(this.statements.poolsOfIds.all(JSON.stringify(ids)).map((row) => row.id));
  }

  get(id: string): MemoryEntry | undefined {
    const row = this.statements.byId.get(id);
    return row ? toEntry(row) : undefined;
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

  /**
   * One page of a pool's entries in sort order, keyset-paged: the WHERE clause starts after the
   * previous page's last (key, rowid), so page 200 reads as few rows as page 1 (no OFFSET walking).
   * The created sort walks the (pool, is_archived, created_at) index; the others sort the pool's
   * filtered rows, which costs the same for every page.
   */
  page(query: PageQuery): PageRow[] {
    const key = PAGE_KEYS[query.sort];
    const where = ['pool = @pool', 'is_archived = @archived'];
    if (query.type !== undefined) where.push('type = @type');
    if (query.category !== undefined) where.push('category = @category');
    if (query.confirmed !== undefined) where.push('is_confirmed = @confirmed');
    if (query.source !== undefined) where.push('source = @source');
    if (query.after) where.push(`(${key}, rowid) < (@afterKey, @afterRowid)`);
    const sql = `SELECT *, ${key} AS page_key, rowid AS page_rowid FROM memories WHERE ${where.join(' AND ')}
       ORDER BY page_key DESC, rowid DESC LIMIT ${integer(query.limit)}`;
    let statement = this.pageStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.pageStatements.set(sql, statement);
    }
    const parameters: Record<string, unknown> = { pool: query.pool, archived: query.archived ? 1 : 0 };
    if (query.sort === 'confidence') Object.assign(parameters, DECAY_RATE_PARAMS, { today: query.today });
    if (query.type !== undefined) parameters['type'] = query.type;
    if (query.category !== undefined) parameters['category'] = query.category;
    if (query.confirmed !== undefined) parameters['confirmed'] = query.confirmed ? 1 : 0;
    if (query.source !== undefined) parameters['source'] = query.source;
    if (query.after) Object.assign(parameters, { afterKey: query.after.key, afterRowid: query.after.rowid });
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

  activeCount(pool: string): number {
    return this.statements.activeCount.get(pool)?.n ?? 0;
  }

  /** Last seq of an event about this pool (0 when none). */
  poolSeq(pool: string): number {
    return this.statements.poolSeq.get(pool)?.last_seq ?? 0;
  }

  pools(): string[] {
    return this.db
      .prepare<[], { pool: string }>('SELECT pool FROM pools ORDER BY pool')
      .all()
      .map((row) => row.pool);
  }

  *allEntries(): Generator<MemoryEntry> {
    for (const row of this.db.prepare<[], MemoryRow>('SELECT * FROM memories ORDER BY id').iterate()) yield toEntry(row);
  }

  stats(): PoolStats[] {
    return readPoolStats(this.db, this.pools());
  }

  dispatchedSeq(): number {
    return this.meta('dispatched_seq');
  }

  markDispatched(seq: number): void {
    this.statements.setMeta.run(seq, 'dispatched_seq');
  }

  /**
   * For filling an empty database: without the FTS triggers every row is written once, and
   * `rebuildFullText` then indexes the final content in one pass, which is faster than indexing
   * each insert and update as it comes.
   */
  suspendFullText(): void {
    this.db.exec(`DROP TRIGGER IF EXISTS memories_fts_insert; DROP TRIGGER IF EXISTS memories_fts_delete;
      DROP TRIGGER IF EXISTS memories_fts_update; INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_stale', 1);`);
  }

  /** Restores the triggers and indexes every row; also run on open when a fill was interrupted. */
  rebuildFullText(): void {
    this.db.exec(SCHEMA_SQL);
    this.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild'); DELETE FROM meta WHERE key = 'fts_stale';");
  }

  /** Checks the FTS index against its content table; throws when they disagree. */
  checkFts(): void {
    this.db.exec("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)");
  }

  /**
   * After a purge: FTS5 keeps a deleted document's terms in older index segments until they are
   * merged, and the WAL keeps old page copies; optimize and checkpoint so no trace stays on disk.
   */
  scrub(): void {
    this.db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')");
    this.checkpoint();
  }

  /** Moves the WAL into the main file and truncates it. */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  close(): void {
    if (!this.db.open) return;
    this.checkpoint();
    this.db.close();
  }

  private meta(key: string): number {
    return this.statements.getMeta.get(key)?.value ?? 0;
  }
}

/** A validated count as SQL text; throws on anything else, so nothing but digits reaches the SQL. */
function integer(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a count: ${value}`);
  return String(value);
}
