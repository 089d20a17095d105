import type Database from 'better-sqlite3';

export interface PoolStats {
  readonly pool: string;
  readonly active: number;
  readonly archived: number;
  /** Active entries per category; `uncategorized` for none. */
  readonly byCategory: Readonly<Record<string, number>>;
}

/** Counts per pool from the `memories` table; `knownPools` adds pools that have none left. */
export function readPoolStats(db: Database.Database, knownPools: readonly string[] = []): PoolStats[] {
  const rows = db
    .prepare<[], { pool: string; category: string | null; is_archived: number; n: number }>(
      'SELECT pool, category, is_archived, count(*) AS n FROM memories GROUP BY pool, category, is_archived ORDER BY pool',
    )
    .all();
  const byPool = new Map<string, { pool: string; active: number; archived: number; byCategory: Record<string, number> }>();
  for (const pool of knownPools) byPool.set(pool, { pool, active: 0, archived: 0, byCategory: {} });
  for (const row of rows) {
    const stats = byPool.get(row.pool) ?? { pool: row.pool, active: 0, archived: 0, byCategory: {} };
    byPool.set(row.pool, stats);
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
