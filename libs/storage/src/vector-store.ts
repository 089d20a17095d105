import type Database from 'better-sqlite3';
import type { Category, MemoryEvent } from '@engram/domain';
import { vectorToBlob } from '@engram/embeddings';
import * as sqliteVec from 'sqlite-vec';
import { contentHash } from './content-hash.js';

/**
 * `vectors.db`, attached to the projection's connection as `vectors`:
 * - `embeddings`: one vector per (model, content hash). Keyed by content, not by entry, so a text is
 *   embedded once whatever entry, replay or rebuild it comes from, and a new model is a new set.
 * - `entry_hashes`: which content hash each entry has now; rebuilt from the projection on open
 *   and kept current from committed events, so it is a projection like the database.
 * A separate file because `engram replay` replaces engram.db: vectors, which cost endpoint calls,
 * survive it.
 */
const VECTOR_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS vectors.embeddings (
  model TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vector BLOB NOT NULL,
  UNIQUE (model, content_hash)
);
CREATE TABLE IF NOT EXISTS vectors.entry_hashes (
  memory_id TEXT PRIMARY KEY,
  pool TEXT NOT NULL,
  content_hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors.entry_hashes_by_pool ON entry_hashes (pool, content_hash);
CREATE INDEX IF NOT EXISTS vectors.entry_hashes_by_hash ON entry_hashes (content_hash);
`;

const VECTORS_MMAP_BYTES = 4 * 1024 ** 3;

/** A text of a pool that has no vector of the model yet. */
export interface MissingVector {
  readonly hash: string;
  readonly content: string;
}

export interface NearestQuery {
  readonly pool: string;
  readonly model: string;
  readonly vector: Float32Array;
  readonly limit: number;
  readonly category?: Category;
  readonly includeArchived: boolean;
}

/** An entry and its cosine distance to the query (0: same direction, 2: opposite). */
export interface NearEntry {
  readonly id: string;
  readonly distance: number;
}

export class VectorStore {
  private readonly statements;

  private constructor(private readonly db: Database.Database) {
    this.statements = {
      upsertEntry: db.prepare<[string, string, string]>(
        'INSERT INTO vectors.entry_hashes (memory_id, pool, content_hash) VALUES (?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET content_hash = excluded.content_hash',
      ),
      hashOf: db.prepare<[string], { content_hash: string }>('SELECT content_hash FROM vectors.entry_hashes WHERE memory_id = ?'),
      deleteEntry: db.prepare<[string]>('DELETE FROM vectors.entry_hashes WHERE memory_id = ?'),
      hashInUse: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM vectors.entry_hashes WHERE content_hash = ?'),
      deleteVectors: db.prepare<[string]>('DELETE FROM vectors.embeddings WHERE content_hash = ?'),
      // Only for a hash some entry still has: a purge between the worker's read and its write must not bring a vector back.
      insertVector: db.prepare<[string, string, Buffer, string]>(
        `INSERT OR IGNORE INTO vectors.embeddings (model, content_hash, vector)
         SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM vectors.entry_hashes WHERE content_hash = ?)`,
      ),
      missing: db.prepare<[string, string, number], MissingVector>(
        `SELECT h.content_hash AS hash, min(m.content) AS content
         FROM vectors.entry_hashes AS h JOIN memories AS m ON m.id = h.memory_id
         WHERE h.pool = ? AND m.is_archived = 0
           AND NOT EXISTS (SELECT 1 FROM vectors.embeddings AS e WHERE e.model = ? AND e.content_hash = h.content_hash)
         GROUP BY h.content_hash LIMIT ?`,
      ),
      missingCount: db.prepare<[string, string], { n: number }>(
        `SELECT count(*) AS n FROM vectors.entry_hashes AS h JOIN memories AS m ON m.id = h.memory_id
         WHERE h.pool = ? AND m.is_archived = 0
           AND NOT EXISTS (SELECT 1 FROM vectors.embeddings AS e WHERE e.model = ? AND e.content_hash = h.content_hash)`,
      ),
      poolsMissing: db.prepare<[string], { pool: string }>(
        `SELECT DISTINCT h.pool AS pool FROM vectors.entry_hashes AS h JOIN memories AS m ON m.id = h.memory_id
         WHERE m.is_archived = 0
           AND NOT EXISTS (SELECT 1 FROM vectors.embeddings AS e WHERE e.model = ? AND e.content_hash = h.content_hash)`,
      ),
      // Brute force in C (sqlite-vec's cosine distance over every vector of the pool): exact, and
      // measured in bench/storage.bench.ts at 10k and 100k entries.
      nearest: db.prepare<Record<string, unknown>, NearEntry>(
        `SELECT h.memory_id AS id, vec_distance_cosine(e.vector, @vector) AS distance
         FROM vectors.entry_hashes AS h
         JOIN vectors.embeddings AS e ON e.model = @model AND e.content_hash = h.content_hash
         JOIN memories AS m ON m.id = h.memory_id
         WHERE h.pool = @pool AND (@archived = 1 OR m.is_archived = 0) AND (@category IS NULL OR m.category = @category)
         ORDER BY distance LIMIT @limit`,
      ),
    };
  }

  /** Loads sqlite-vec into the projection's connection and attaches (creating) the vectors file. */
  static attach(db: Database.Database, path: string): VectorStore {
    sqliteVec.load(db);
    db.prepare('ATTACH DATABASE ? AS vectors').run(path);
    db.pragma('vectors.journal_mode = WAL');
    db.pragma('vectors.synchronous = NORMAL');
    // A purged text's vector must not linger in free pages either.
    db.pragma('vectors.secure_delete = ON');
    // The scan reads every vector of the pool (6 KB each at 1,536 dimensions): mapped, its pages are
    // read without a system call each (a 10k-vector scan took ~85 instead of ~130 ms on the bench machine).
    db.pragma(`vectors.mmap_size = ${VECTORS_MMAP_BYTES}`);
    db.exec(VECTOR_SCHEMA_SQL);
    return new VectorStore(db);
  }

  /** Rebuilds `entry_hashes` from the entries the projection holds (on open: the log may have moved without us). */
  sync(entries: Iterable<{ readonly id: string; readonly pool: string; readonly content: string }>): number {
    let count = 0;
    this.db.transaction(() => {
      this.db.exec('DELETE FROM vectors.entry_hashes');
      for (const entry of entries) {
        this.statements.upsertEntry.run(entry.id, entry.pool, contentHash(entry.content));
        count++;
      }
    })();
    return count;
  }

  /** Keeps `entry_hashes` current after a commit; a purge also drops the vectors of the purged text. */
  noteEvents(events: readonly MemoryEvent[]): void {
    this.db.transaction(() => {
      for (const event of events) {
        switch (event.type) {
          case 'memory.stored':
          case 'memory.consolidated':
            this.statements.upsertEntry.run(event.data.id, event.pool, contentHash(event.data.content));
            break;
          case 'memory.updated':
            if (event.data.content !== undefined) this.statements.upsertEntry.run(event.data.id, event.pool, contentHash(event.data.content));
            break;
          case 'memory.purged':
            this.forget(event.data.id);
            break;
          default:
            break;
        }
      }
    })();
  }

  missing(pool: string, model: string, limit: number): MissingVector[] {
    return this.statements.missing.all(pool, model, limit);
  }

  missingCount(pool: string, model: string): number {
    return this.statements.missingCount.get(pool, model)?.n ?? 0;
  }

  poolsMissing(model: string): string[] {
    return this.statements.poolsMissing.all(model).map((row) => row.pool);
  }

  /** Stores vectors of texts that some entry still has; returns how many were new. */
  put(model: string, vectors: readonly { readonly hash: string; readonly vector: Float32Array }[]): number {
    let added = 0;
    this.db.transaction(() => {
      for (const { hash, vector } of vectors) added += this.statements.insertVector.run(model, hash, vectorToBlob(vector), hash).changes;
    })();
    return added;
  }

  nearest(query: NearestQuery): NearEntry[] {
    return this.statements.nearest.all({
      vector: vectorToBlob(query.vector),
      model: query.model,
      pool: query.pool,
      archived: query.includeArchived ? 1 : 0,
      category: query.category ?? null,
      limit: query.limit,
    });
  }

  private forget(id: string): void {
    const hash = this.statements.hashOf.get(id)?.content_hash;
    this.statements.deleteEntry.run(id);
    if (hash !== undefined && (this.statements.hashInUse.get(hash)?.n ?? 0) === 0) this.statements.deleteVectors.run(hash);
  }
}
