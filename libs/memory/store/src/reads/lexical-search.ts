import type Database from 'better-sqlite3-multiple-ciphers';
import type { Category } from '@engram/domain';
import { toFtsMatch } from './search-query.js';

export interface LexicalQuery {
  readonly pool: string;
  /** The words to look for (see searchTerms). */
  readonly terms: readonly string[];
  readonly category?: Category;
  readonly includeArchived?: boolean;
}

/** A ranked entry: its id, its row (insertion order: on equal scores the older entry first) and its score. */
export interface LexicalHit {
  readonly id: string;
  readonly rowid: number;
  readonly score: number;
}

/**
 * BM25 costs ~1-4 µs per match (FTS5 walks each match's phrase instances), so a query ranks every
 * match of its rarest terms, adding terms rarest first while their matches (in all pools) stay
 * within this budget; commoner terms, which BM25 weighs least, are left out. When even the rarest
 * term is over budget, every match of all the terms together is ranked, and when those are over
 * budget too, the most recent RECENT_MATCHES of them. A conversation-sized pool never gets there;
 * ranking every match of a word found in a third of 100k entries would cost ~100 ms.
 */
const MATCH_BUDGET = 1_000;
const RECENT_MATCHES = 500;
/** This many of the best BM25 matches are ranked further, with their context. */
const RELEVANT_MATCHES = 100;
/** Share of a match's relevance that the entries written next to it receive, at distance 1 and 2. */
const CONTEXT_WEIGHTS = [0.4, 0.2] as const;
/** Entries written further apart than this (per step) are not each other's context. */
const CONTEXT_GAP_MS = 30 * 60_000;

interface MatchRow {
  readonly rowid: number;
  readonly id: string;
  readonly created_at: string;
  readonly relevance: number;
  /** JSON [[rowid, created_at], ...]: the entries of the pool written just before / after. */
  readonly before: string;
  readonly after: string;
}

type Neighbour = [rowid: number, createdAt: string];

/**
 * Relevance-first lexical ranking. Every match of the terms in the pool is scored by BM25 (FTS5,
 * porter stemming), no recency window. The best RELEVANT_MATCHES are then ranked again with their
 * context: each also receives part of the relevance of the matches written just before and after
 * it in the same pool (the same conversation), so that of two entries that both mention "James",
 * the one written right after "What are the names of James's dogs?" ranks first for "names of
 * James's dogs". Only matches are returned: every result shares a word with the query. Measured on
 * the LoCoMo dev set (`npm run bench -- retrieval`): recall@5 0.616 -> 0.677.
 */
export class LexicalSearch {
  private readonly statements = new Map<string, Database.Statement<Record<string, string>, MatchRow>>();
  private readonly matchCount: Database.Statement<[string], { n: number }>;

  constructor(private readonly db: Database.Database) {
    this.matchCount = db.prepare('SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH ?');
  }

  /** Every candidate, best first (ties: older first). Empty when there is no term. */
  rank(query: LexicalQuery): LexicalHit[] {
    const plan = this.plan(query.terms);
    if (plan === null) return [];
    const rows = this.statement(query, plan.matches).all({
      match: plan.match,
      pool: query.pool,
      ...(query.category ? { category: query.category } : {}),
    });
    const relevance = new Map<number, number>();
    for (const row of rows) relevance.set(row.rowid, row.relevance);
    // context[d][rowid]: the best relevance among the matches at distance d + 1.
    const context = CONTEXT_WEIGHTS.map(() => new Map<number, number>());
    for (const row of rows) {
      const at = Date.parse(row.created_at);
      for (const side of [row.before, row.after]) {
        const neighbours = (JSON.parse(side) as Neighbour[]).sort((a, b) => Math.abs(a[0] - row.rowid) - Math.abs(b[0] - row.rowid));
        neighbours.forEach(([rowid, createdAt], distance) => {
          const near = context[distance];
          if (!near || !relevance.has(rowid) || Math.abs(Date.parse(createdAt) - at) > CONTEXT_GAP_MS * (distance + 1)) return;
          near.set(rowid, Math.max(near.get(rowid) ?? 0, row.relevance));
        });
      }
    }
    const hits = rows.map(({ rowid, id, relevance: score }) => {
      CONTEXT_WEIGHTS.forEach((weight, distance) => (score += weight * (context[distance]?.get(rowid) ?? 0)));
      return { id, rowid, score };
    });
    return hits.sort((a, b) => b.score - a.score || a.rowid - b.rowid);
  }

  /** The best `limit` entries of the pool for the terms, with their scores: what a fusion with other rankings takes. */
  search(query: LexicalQuery, limit: number): LexicalHit[] {
    return this.rank(query).slice(0, limit);
  }

  /** Which matches to rank (see MATCH_BUDGET); counting a term's matches walks its doclist, which is cheap. */
  private plan(terms: readonly string[]): { readonly match: string; readonly matches: 'every' | 'recent' } | null {
    const counted = terms.map((term) => ({ term, matches: this.count(toFtsMatch([term])) })).sort((a, b) => a.matches - b.matches);
    const chosen: string[] = [];
    let total = 0;
    for (const { term, matches } of counted) {
      if (total + matches > MATCH_BUDGET) break;
      total += matches;
      chosen.push(term);
    }
    if (chosen.length > 0) return { match: toFtsMatch(chosen) ?? '', matches: 'every' };
    const all = toFtsMatch(terms, 'AND');
    if (all === null) return null;
    return { match: all, matches: terms.length > 1 && this.count(all) <= MATCH_BUDGET ? 'every' : 'recent' };
  }

  private count(match: string | null): number {
    return match === null ? 0 : (this.matchCount.get(match)?.n ?? 0);
  }

  private statement(query: LexicalQuery, matches: 'every' | 'recent'): Database.Statement<Record<string, string>, MatchRow> {
    const filters = [...(query.includeArchived ? [] : ['is_archived = 0']), ...(query.category ? ['category = @category'] : [])];
    const where = (alias: string) => filters.map((filter) => ` AND ${alias}.${filter}`).join('');
    const neighbours = (direction: '<' | '>') =>
      `(SELECT json_group_array(json_array(n.rowid, n.created_at)) FROM (
         SELECT n.rowid AS rowid, n.created_at AS created_at FROM memories AS n INDEXED BY memories_in_pool_order
         WHERE n.pool = @pool${where('n')} AND n.rowid ${direction} m.rowid
         ORDER BY n.rowid ${direction === '<' ? 'DESC' : 'ASC'} LIMIT ${CONTEXT_WEIGHTS.length}) AS n)`;
    // FTS5 reports BM25 negative (lower is better).
    const candidates = `SELECT c.rowid AS rowid, c.id AS id, c.created_at AS created_at, -bm25(memories_fts) AS relevance
        FROM memories_fts JOIN memories AS c ON c.rowid = memories_fts.rowid
        WHERE memories_fts MATCH @match AND c.pool = @pool${where('c')}`;
    const ranked =
      matches === 'every'
        ? `${candidates} ORDER BY relevance DESC, c.rowid LIMIT ${RELEVANT_MATCHES}`
        : `SELECT * FROM (${candidates} ORDER BY memories_fts.rowid DESC LIMIT ${RECENT_MATCHES}) ORDER BY relevance DESC, rowid LIMIT ${RELEVANT_MATCHES}`;
    const sql = `WITH matched AS (${ranked})
      SELECT m.rowid, m.id, m.created_at, m.relevance, ${neighbours('<')} AS before, ${neighbours('>')} AS after FROM matched AS m`;
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare<Record<string, string>, MatchRow>(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
