import type Database from 'better-sqlite3-multiple-ciphers';

export interface PoolStats {
  readonly pool: string;
  readonly active: number;
  readonly archived: number;
  /** Active entries per category; `uncategorized` for none. */
  readonly byCategory: Readonly<Record<string, number>>;
  /** Last seq of an event about the pool (0 when unknown). */
  readonly lastSeq: number;
  /** The latest updatedAt of the pool's entries; null when it has none. */
  readonly lastChangedAt: string | null;
}

/** Counts per pool from the `memories` table; `knownPools` adds pools that have none left. */
export function readPoolStats(db: Database.Database, knownPools: readonly string[] = []): PoolStats[] {
  const rows = db
    .prepare<[], { pool: string; category: string | null; is_archived: number; n: number; changed: string | null }>(
      'SELECT pool, category, is_archived, count(*) AS n, max(updated_at) AS changed FROM memories GROUP BY pool, category, is_archived ORDER BY pool',
    )
    .all();
  const seqs = new Map(
    db
      .prepare<[], { pool: string; last_seq: number }>('SELECT pool, last_seq FROM pools')
      .all()
      .map((row) => [row.pool, row.last_seq]),
  );
  type Mutable = {
    pool: string;
    active: number;
    archived: number;
    byCategory: Record<string, number>;
    lastSeq: number;
    lastChangedAt: string | null;
  };
  const empty = (pool: string): Mutable => ({ pool, active: 0, archived: 0, byCategory: {}, lastSeq: seqs.get(pool) ?? 0, lastChangedAt: null });
  const byPool = new Map<string, Mutable>();
  for (const pool of knownPools) byPool.set(pool, empty(pool));
  for (const row of rows) {
    const stats = byPool.get(row.pool) ?? empty(row.pool);
    byPool.set(row.pool, stats);
    if (row.changed !== null && (stats.lastChangedAt === null || row.changed > stats.lastChangedAt)) stats.lastChangedAt = row.changed;
    if (row.is_archived) {
      stats.archived += row.n;
    } else {
      stats.active += row.n;
      const key = row.category ?? 'uncategorized';
      stats.byCategory[key] = (stats.byCategory[key] ?? 0) + row.n;
    }
  }
  return [...byPool.values()].sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
}
