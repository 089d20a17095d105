import { CATEGORIES, decayRate, type Category, type MemoryEntry, type MemorySource, type MemoryType } from '@engram/domain';
import type { PageSort } from '@engram/contracts';
import type { MemoryRow } from './memory-row.js';

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

/** A row as the page statement returns it. */
export type PageStatementRow = MemoryRow & { readonly page_key: string | number; readonly page_rowid: number };

/** Sort keys of a page, descending; rowid breaks ties (the created_at index carries it). */
const PAGE_KEYS: Readonly<Record<PageSort, string>> = {
  created: 'created_at',
  last_used: "coalesce(last_referenced, '')",
  confidence: `confidence * pow(
    CASE category ${CATEGORIES.map((category, index) => `WHEN '${category}' THEN @rate${index}`).join(' ')} ELSE @rateNone END,
    max(0, @today - julianday(coalesce(last_referenced, created_at))))`,
};

/** The domain's decay rates, bound per category for the confidence sort of a page (see PAGE_KEYS). */
const DECAY_RATE_PARAMS: Readonly<Record<string, number>> = Object.fromEntries([
  ...CATEGORIES.map((category, index) => [`rate${index}`, decayRate(category)]),
  ['rateNone', decayRate(null)],
]);

/**
 * The SQL and parameters of one page of a pool's entries in sort order, keyset-paged: the WHERE
 * clause starts after the previous page's last (key, rowid), so page 200 reads as few rows as page 1
 * (no OFFSET walking). The created sort walks the (pool, is_archived, created_at) index; the others
 * sort the pool's filtered rows, which costs the same for every page. Equal queries give equal SQL,
 * so the statement can be prepared once per shape.
 */
export function pageStatement(query: PageQuery): { readonly sql: string; readonly parameters: Record<string, unknown> } {
  const key = PAGE_KEYS[query.sort];
  const where = ['pool = @pool', 'is_archived = @archived'];
  if (query.type !== undefined) where.push('type = @type');
  if (query.category !== undefined) where.push('category = @category');
  if (query.confirmed !== undefined) where.push('is_confirmed = @confirmed');
  if (query.source !== undefined) where.push('source = @source');
  if (query.after) where.push(`(${key}, rowid) < (@afterKey, @afterRowid)`);
  const sql = `SELECT *, ${key} AS page_key, rowid AS page_rowid FROM memories WHERE ${where.join(' AND ')}
       ORDER BY page_key DESC, rowid DESC LIMIT ${integer(query.limit)}`;
  const parameters: Record<string, unknown> = { pool: query.pool, archived: query.archived ? 1 : 0 };
  if (query.sort === 'confidence') Object.assign(parameters, DECAY_RATE_PARAMS, { today: query.today });
  if (query.type !== undefined) parameters['type'] = query.type;
  if (query.category !== undefined) parameters['category'] = query.category;
  if (query.confirmed !== undefined) parameters['confirmed'] = query.confirmed ? 1 : 0;
  if (query.source !== undefined) parameters['source'] = query.source;
  if (query.after) Object.assign(parameters, { afterKey: query.after.key, afterRowid: query.after.rowid });
  return { sql, parameters };
}

/** A validated count as SQL text; throws on anything else, so nothing but digits reaches the SQL. */
function integer(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a count: ${value}`);
  return String(value);
}
