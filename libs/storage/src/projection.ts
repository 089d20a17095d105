import { existsSync, renameSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { affectedIds, changesOf, type Category, type MemoryEntry, type MemoryEvent, type MemoryType } from '@engram/domain';
import { toEntry, toRow, type MemoryRow } from './memory-row.js';
import { readPoolStats, type PoolStats } from './pool-stats.js';
import { SCHEMA_SQL, SCHEMA_VERSION } from './schema.js';

export interface ListQuery {
  readonly pool: string;
  readonly category?: Category;
  readonly type?: MemoryType;
  readonly archived: boolean;
  readonly limit: number;
}

export interface FtsQuery {
  readonly pool: string;
  readonly match: string;
  readonly category?: Category;
  readonly includeArchived: boolean;
  /** How many of the best BM25 matches to consider. */
  readonly candidates: number;
  /** How many results the caller needs; fewer after filtering triggers the exhaustive query. */
  readonly needed: number;
}

/** Tier 1 looks at most at this many of a pool's eligible entries (by stored confidence). */
const TIER1_CANDIDATE_LIMIT = 2000;

/**
 * The SQLite projection of the log (WAL). Every event is applied through the domain's `changesOf`,
 * the same function `evolve` uses, so the database cannot disagree with the pure model. `last_seq`
 * is stored in the same transaction as the changes: applying an event twice changes nothing.
 */
export class Projection {
  private readonly statements;
  private lastSeqValue: number;

  private constructor(readonly db: Database.Database) {
    this.statements = {
      byId: db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE id = ?'),
      insert: db.prepare<[MemoryRow]>(
        `INSERT INTO memories (id, pool, type, category, content, confidence, created_at, updated_at, last_referenced,
           reference_count, is_confirmed, is_archived, source, superseded_by, supersedes)
         VALUES (@id, @pool, @type, @category, @content, @confidence, @created_at, @updated_at, @last_referenced,
           @reference_count, @is_confirmed, @is_archived, @source, @superseded_by, @supersedes)`,
      ),
      // Two updates: naming `content` in SET fires the FTS trigger, so do it only when content changed.
      updateWithContent: db.prepare<[MemoryRow]>(
        `UPDATE memories SET type = @type, category = @category, content = @content, confidence = @confidence,
           updated_at = @updated_at, last_referenced = @last_referenced, reference_count = @reference_count,
           is_confirmed = @is_confirmed, is_archived = @is_archived, superseded_by = @superseded_by, supersedes = @supersedes
         WHERE id = @id`,
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
      activeOfPool: db.prepare<[string], MemoryRow>(
        'SELECT * FROM memories WHERE pool = ? AND is_archived = 0 ORDER BY created_at, id',
      ),
      tier1Candidates: db.prepare<[string, number], MemoryRow>(
        `SELECT * FROM memories WHERE pool = ? AND is_archived = 0
           AND (type = 'USER' OR category IN ('preference', 'person', 'environment', 'project'))
           AND (category IS NULL OR category NOT IN ('decision', 'gotcha'))
         ORDER BY confidence DESC, created_at, id LIMIT ?`,
      ),
      byConfidence: db.prepare<[string, number, string | null, string | null, number], MemoryRow>(
        `SELECT * FROM memories WHERE pool = ? AND (? = 1 OR is_archived = 0) AND (? IS NULL OR category = ?)
         ORDER BY confidence DESC, created_at DESC, id LIMIT ?`,
      ),
    };
    this.lastSeqValue = this.meta('last_seq');
  }

  /** Opens an existing or new database file; throws when it cannot be opened or fails quick_check. */
  static open(path: string): Projection {
    const db = new Database(path);
    try {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`quick_check: ${String(check)}`);
      db.pragma('journal_mode = WAL');
      // The log is the durable record; the projection can be rebuilt, so it need not fsync each commit.
      db.pragma('synchronous = NORMAL');
      // Purged content must not linger in free pages.
      db.pragma('secure_delete = ON');
      db.exec(SCHEMA_SQL);
      const version = db.prepare<[], { value: number }>("SELECT value FROM meta WHERE key = 'schema_version'").get();
      if (version?.value !== SCHEMA_VERSION) throw new Error(`schema version ${version?.value}, expected ${SCHEMA_VERSION}`);
      return new Projection(db);
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

  /** Applies events in one transaction; skips those already applied. Returns the pools touched. */
  apply(events: readonly MemoryEvent[]): Set<string> {
    const pools = new Set<string>();
    this.db.transaction(() => {
      for (const event of events) {
        if (event.seq <= this.lastSeqValue) continue;
        if (event.seq !== this.lastSeqValue + 1) {
          throw new Error(`projection at seq ${this.lastSeqValue} cannot apply seq ${event.seq}: events are missing`);
        }
        this.applyOne(event);
        this.statements.touchPool.run(event.pool, event.seq);
        this.lastSeqValue = event.seq;
        pools.add(event.pool);
      }
      this.statements.setMeta.run(this.lastSeqValue, 'last_seq');
    }).immediate();
    return pools;
  }

  private applyOne(event: MemoryEvent): void {
    const before = new Map<string, MemoryEntry | undefined>();
    for (const id of affectedIds(event)) before.set(id, this.get(id));
    const changes = changesOf(event, (id) => (before.has(id) ? before.get(id) : this.get(id)));
    for (const [id, after] of changes) {
      const previous = before.get(id);
      if (!after) {
        if (previous) this.statements.delete.run(id);
      } else if (!previous) {
        this.statements.insert.run(toRow(after));
      } else if (after.content !== previous.content) {
        this.statements.updateWithContent.run(toRow(after));
      } else {
        const { content: _content, ...row } = toRow(after);
        this.statements.updateWithoutContent.run(row);
      }
    }
  }

  get(id: string): MemoryEntry | undefined {
    const row = this.statements.byId.get(id);
    return row ? toEntry(row) : undefined;
  }

  list(query: ListQuery): MemoryEntry[] {
    const where = ['pool = @pool', 'is_archived = @archived'];
    if (query.category) where.push('category = @category');
    if (query.type) where.push('type = @type');
    const rows = this.db
      .prepare<Record<string, unknown>, MemoryRow>(
        `SELECT * FROM memories WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id LIMIT @limit`,
      )
      .all({ pool: query.pool, archived: query.archived ? 1 : 0, category: query.category, type: query.type, limit: query.limit });
    return rows.map(toEntry);
  }

  /** The best BM25 matches (rank: lower is better), filtered to the pool. */
  searchText(query: FtsQuery): { entry: MemoryEntry; rank: number }[] {
    const filters = ['m.pool = @pool'];
    if (!query.includeArchived) filters.push('m.is_archived = 0');
    if (query.category) filters.push('m.category = @category');
    const params = { match: query.match, pool: query.pool, category: query.category, candidates: query.candidates };
    // First the best matches overall (FTS5 stops early with ORDER BY rank LIMIT); when filters left too
    // few, the exhaustive query over every match of the pool.
    const bounded = this.db
      .prepare<typeof params, MemoryRow & { rank: number }>(
        `SELECT m.*, f.rank AS rank FROM
           (SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH @match ORDER BY rank LIMIT @candidates) AS f
         JOIN memories AS m ON m.rowid = f.rowid WHERE ${filters.join(' AND ')} ORDER BY f.rank`,
      )
      .all(params);
    const rows =
      bounded.length >= query.needed
        ? bounded
        : this.db
            .prepare<typeof params, MemoryRow & { rank: number }>(
              `SELECT m.*, memories_fts.rank AS rank FROM memories_fts JOIN memories AS m ON m.rowid = memories_fts.rowid
               WHERE memories_fts MATCH @match AND ${filters.join(' AND ')} ORDER BY memories_fts.rank LIMIT @candidates`,
            )
            .all(params);
    return rows.map((row) => ({ entry: toEntry(row), rank: row.rank }));
  }

  /** Entries by stored confidence, for a search without words. */
  byConfidence(pool: string, includeArchived: boolean, category: Category | undefined, limit: number): MemoryEntry[] {
    return this.statements.byConfidence
      .all(pool, includeArchived ? 1 : 0, category ?? null, category ?? null, limit)
      .map(toEntry);
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
