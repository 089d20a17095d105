import { existsSync } from 'node:fs';
import type Database from 'better-sqlite3-multiple-ciphers';
import type { Category, MemoryEvent } from '@engram/domain';
import { vectorToBlob } from '@engram/embeddings';
import type { Logger } from 'pino';
import * as sqliteVec from 'sqlite-vec';
import { BINARY_CODE_SCHEME, binaryCode, codeFromBlob, codeToBlob } from './binary-code.js';
import { contentHash } from './content-hash.js';
import { attachDatabase, openReadOnlyDatabase } from '../database/database.js';
import type { AtRestKey } from '../database/page-cipher.js';
import { VectorIndex } from './vector-index.js';

/**
 * `vectors.db`, attached to the projection's connection as `vectors`:
 * - `embeddings`: one vector per (model, content hash). Keyed by content, not by entry, so a text is
 *   embedded once whatever entry, replay or rebuild it comes from, and a new model is a new set.
 * - `codes`: each vector's binary code (binary-code.ts), the first stage of a search; a table of its
 *   own so that loading the codes at start does not read the vectors.
 * - `entry_hashes`: which content hash each entry has now; rebuilt from the projection on open
 *   and kept current from committed events, so it is a projection like the database.
 * - `settings`: the code scheme the codes were made with.
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
CREATE TABLE IF NOT EXISTS vectors.codes (
  model TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  code BLOB NOT NULL,
  PRIMARY KEY (model, content_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vectors.entry_hashes (
  memory_id TEXT PRIMARY KEY,
  pool TEXT NOT NULL,
  content_hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors.entry_hashes_by_pool ON entry_hashes (pool, content_hash);
CREATE INDEX IF NOT EXISTS vectors.entry_hashes_by_hash ON entry_hashes (content_hash);
CREATE TABLE IF NOT EXISTS vectors.settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

const VECTORS_MMAP_BYTES = 4 * 1024 ** 3;
/** Entries re-ranked by exact cosine for each one asked for (at least RERANK_MIN); see README "Hybrid search". */
const RERANK_FACTOR = 4;
const RERANK_MIN = 200;
/** Codes computed per transaction when vectors stored before codes existed get theirs. */
const CODE_BACKFILL_CHUNK = 2_000;

/** A text of a pool that has no vector of the model yet. */
export interface MissingVector {
  readonly hash: string;
  readonly content: string;
}

export interface NearestQuery {
  readonly pool: string;
  readonly vector: Float32Array;
  readonly limit: number;
  readonly category?: Category;
  readonly includeArchived: boolean;
  /** Neighbours less similar than this (cosine) are left out. Default: none left out. */
  readonly minSimilarity?: number;
}

/** An entry and its cosine distance to the query (0: same direction, 2: opposite). */
export interface NearEntry {
  readonly id: string;
  readonly distance: number;
}

export interface VectorStoreOptions {
  /** The configured model: the one searches use, and the one whose coverage lets other models' vectors go. */
  readonly model: string;
  readonly logger: Logger;
  /**
   * `quantised` (default): binary codes scanned first, the best re-ranked by exact cosine.
   * `exact`: exact cosine over every entry of the pool (the reference the bench compares with).
   */
  readonly scan?: 'quantised' | 'exact';
}

interface EntryState {
  readonly pool: string;
  readonly content_hash: string;
  readonly is_archived: number;
  readonly category: Category | null;
}

export class VectorStore {
  private readonly statements;
  private readonly index = new VectorIndex();
  /** Query vectors are cached by the hybrid search (by text): their codes with them. */
  private readonly queryCodes = new WeakMap<Float32Array, Int32Array>();
  /** Whether vectors of models other than the configured one may still be stored (cleared once they are deleted). */
  private otherModels: boolean;

  private constructor(
    private readonly db: Database.Database,
    private readonly options: VectorStoreOptions,
  ) {
    this.statements = {
      upsertEntry: db.prepare<[string, string, string]>(
        'INSERT INTO vectors.entry_hashes (memory_id, pool, content_hash) VALUES (?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET content_hash = excluded.content_hash',
      ),
      hashOf: db.prepare<[string], { pool: string; content_hash: string }>('SELECT pool, content_hash FROM vectors.entry_hashes WHERE memory_id = ?'),
      deleteEntry: db.prepare<[string]>('DELETE FROM vectors.entry_hashes WHERE memory_id = ?'),
      hashInUse: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM vectors.entry_hashes WHERE content_hash = ?'),
      deleteVectors: db.prepare<[string]>('DELETE FROM vectors.embeddings WHERE content_hash = ?'),
      deleteCodes: db.prepare<[string]>('DELETE FROM vectors.codes WHERE content_hash = ?'),
      // Only for a hash some entry still has: a purge between the worker's read and its write must not bring a vector back.
      insertVector: db.prepare<[string, string, Buffer, string]>(
        `INSERT OR IGNORE INTO vectors.embeddings (model, content_hash, vector)
         SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM vectors.entry_hashes WHERE content_hash = ?)`,
      ),
      upsertCode: db.prepare<[string, string, Buffer]>('INSERT OR REPLACE INTO vectors.codes (model, content_hash, code) VALUES (?, ?, ?)'),
      codeOf: db.prepare<[string, string], { code: Buffer }>('SELECT code FROM vectors.codes WHERE model = ? AND content_hash = ?'),
      entriesWithHash: db.prepare<[string], { memory_id: string }>('SELECT memory_id FROM vectors.entry_hashes WHERE content_hash = ?'),
      entryState: db.prepare<[string], EntryState>(
        `SELECT h.pool, h.content_hash, m.is_archived, m.category
         FROM vectors.entry_hashes AS h JOIN memories AS m ON m.id = h.memory_id WHERE h.memory_id = ?`,
      ),
      indexedEntries: db.prepare<[string], EntryState & { memory_id: string; code: Buffer }>(
        `SELECT h.memory_id, h.pool, h.content_hash, m.is_archived, m.category, c.code
         FROM vectors.entry_hashes AS h
         JOIN vectors.codes AS c ON c.model = ? AND c.content_hash = h.content_hash
         JOIN memories AS m ON m.id = h.memory_id`,
      ),
      vectorsWithoutCode: db.prepare<[number], { model: string; content_hash: string; vector: Buffer }>(
        `SELECT e.model, e.content_hash, e.vector FROM vectors.embeddings AS e
         WHERE NOT EXISTS (SELECT 1 FROM vectors.codes AS c WHERE c.model = e.model AND c.content_hash = e.content_hash) LIMIT ?`,
      ),
      setting: db.prepare<[string], { value: string }>('SELECT value FROM vectors.settings WHERE name = ?'),
      setSetting: db.prepare<[string, string]>('INSERT OR REPLACE INTO vectors.settings (name, value) VALUES (?, ?)'),
      otherModelPresent: db.prepare<[string], { present: number }>('SELECT 1 AS present FROM vectors.embeddings WHERE model <> ? LIMIT 1'),
      anyMissing: db.prepare<[string], { present: number }>(
        `SELECT 1 AS present FROM vectors.entry_hashes AS h JOIN memories AS m ON m.id = h.memory_id
         WHERE m.is_archived = 0
           AND NOT EXISTS (SELECT 1 FROM vectors.embeddings AS e WHERE e.model = ? AND e.content_hash = h.content_hash)
         LIMIT 1`,
      ),
      deleteOtherVectors: db.prepare<[string]>('DELETE FROM vectors.embeddings WHERE model <> ?'),
      deleteOtherCodes: db.prepare<[string]>('DELETE FROM vectors.codes WHERE model <> ?'),
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
      // Exact cosine (sqlite-vec, in C) for the candidates the codes found, each text once. CROSS JOIN
      // keeps the candidates the outer loop: otherwise SQLite walks every vector of the model and scans
      // the candidate list for each (candidates x vectors steps).
      rerank: db.prepare<[Buffer, string, string], { hash: string; distance: number }>(
        `SELECT e.content_hash AS hash, vec_distance_cosine(e.vector, ?) AS distance
         FROM json_each(?) AS j CROSS JOIN vectors.embeddings AS e ON e.model = ? AND e.content_hash = j.value`,
      ),
    };
    this.otherModels = this.statements.otherModelPresent.get(options.model) !== undefined;
  }

  /** Loads sqlite-vec into the projection's connection and attaches (creating) the vectors file. */
  static attach(db: Database.Database, path: string, key: AtRestKey, options: VectorStoreOptions): VectorStore {
    sqliteVec.load(db);
    attachDatabase(db, path, 'vectors', key);
    // Takes effect on a new file only: space freed by a model's vectors going goes back to the file system.
    db.pragma('vectors.auto_vacuum = INCREMENTAL');
    db.pragma('vectors.journal_mode = WAL');
    db.pragma('vectors.synchronous = NORMAL');
    // A purged text's vector must not linger in free pages either.
    db.pragma('vectors.secure_delete = ON');
    // Re-ranking reads the candidates' vectors (6 KB each at 1,536 dimensions): mapped, without a system call each.
    db.pragma(`vectors.mmap_size = ${VECTORS_MMAP_BYTES}`);
    db.exec(VECTOR_SCHEMA_SQL);
    return new VectorStore(db, options);
  }

  get model(): string {
    return this.options.model;
  }

  /**
   * Rebuilds `entry_hashes` from the entries the projection holds (on open: the log may have moved
   * without us), gives vectors stored without a code theirs, and loads the index. Then, if the
   * configured model covers every active entry, deletes the vectors of other models.
   */
  sync(entries: Iterable<{ readonly id: string; readonly pool: string; readonly content: string }>): number {
    let count = 0;
    this.db.transaction(() => {
      this.db.exec('DELETE FROM vectors.entry_hashes');
      for (const entry of entries) {
        this.statements.upsertEntry.run(entry.id, entry.pool, contentHash(entry.content));
        count++;
      }
    })();
    this.backfillCodes();
    this.index.clear();
    for (const row of this.statements.indexedEntries.iterate(this.options.model)) {
      this.index.set({
        id: row.memory_id,
        pool: row.pool,
        hash: row.content_hash,
        code: codeFromBlob(row.code),
        archived: row.is_archived === 1,
        category: row.category,
      });
    }
    this.dropOtherModelsIfCovered();
    return count;
  }

  /** Keeps `entry_hashes` and the index current after a commit; a purge also drops the vectors of the purged text. */
  noteEvents(events: readonly MemoryEvent[]): void {
    const touched = new Set<string>();
    this.db.transaction(() => {
      for (const event of events) {
        switch (event.type) {
          case 'memory.stored':
          case 'memory.consolidated':
            this.statements.upsertEntry.run(event.data.id, event.pool, contentHash(event.data.content));
            touched.add(event.data.id);
            if (event.type === 'memory.consolidated') for (const id of event.data.supersedes) touched.add(id);
            break;
          case 'memory.updated':
            if (event.data.content !== undefined) this.statements.upsertEntry.run(event.data.id, event.pool, contentHash(event.data.content));
            touched.add(event.data.id);
            break;
          case 'memory.purged':
            this.forget(event.data.id);
            this.index.remove(event.data.id, event.pool);
            break;
          case 'memory.referenced':
            break;
          default:
            // Archived, restored, deleted, categorized, confirmed: what a search filters on may have changed.
            touched.add(event.data.id);
            break;
        }
      }
    })();
    for (const id of touched) this.refresh(id);
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

  /**
   * Stores vectors (and their codes) of texts that some entry still has, indexes the entries that
   * have them, and, once the configured model covers every active entry, deletes other models'
   * vectors. Returns how many were new.
   */
  put(model: string, vectors: readonly { readonly hash: string; readonly vector: Float32Array }[]): number {
    let added = 0;
    const indexed: string[] = [];
    this.db.transaction(() => {
      for (const { hash, vector } of vectors) {
        const changes = this.statements.insertVector.run(model, hash, vectorToBlob(vector), hash).changes;
        if (changes === 0) continue;
        added += changes;
        this.statements.upsertCode.run(model, hash, codeToBlob(binaryCode(vector)));
        if (model === this.options.model) indexed.push(hash);
      }
    })();
    for (const hash of indexed) for (const { memory_id } of this.statements.entriesWithHash.all(hash)) this.refresh(memory_id);
    // A worker still configured with another model: its vectors go with the next clean-up.
    if (model !== this.options.model && added > 0) this.otherModels = true;
    if (model === this.options.model && added > 0) this.dropOtherModelsIfCovered();
    return added;
  }

  /**
   * The entries of the pool nearest to the vector, by cosine distance, nearest first. With the
   * quantised scan, the pool's codes give the RERANK_FACTOR x limit closest candidates (at least
   * RERANK_MIN), whose exact cosine ranks them; with fewer entries than that, it is exact anyway.
   */
  nearest(query: NearestQuery): NearEntry[] {
    const count = this.options.scan === 'exact' ? Number.POSITIVE_INFINITY : Math.max(RERANK_MIN, query.limit * RERANK_FACTOR);
    let code = this.queryCodes.get(query.vector);
    if (!code) {
      code = binaryCode(query.vector);
      this.queryCodes.set(query.vector, code);
    }
    const candidates = this.index.candidates({
      pool: query.pool,
      code,
      count,
      includeArchived: query.includeArchived,
      ...(query.category ? { category: query.category } : {}),
    });
    if (candidates.length === 0) return [];
    const hashes = [...new Set(candidates.map((candidate) => candidate.hash))];
    const distances = new Map(
      this.statements.rerank.all(vectorToBlob(query.vector), JSON.stringify(hashes), this.options.model).map((row) => [row.hash, row.distance]),
    );
    const maxDistance = query.minSimilarity === undefined ? Number.POSITIVE_INFINITY : 1 - query.minSimilarity;
    const near: NearEntry[] = [];
    for (const { id, hash } of candidates) {
      const distance = distances.get(hash);
      if (distance !== undefined && distance <= maxDistance) near.push({ id, distance });
    }
    near.sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1));
    return near.slice(0, query.limit);
  }

  /** Entries in the index (those with a vector of the configured model), of a pool or all. */
  indexedCount(pool?: string): number {
    return this.index.size(pool);
  }

  /** Brings the entry's place in the index up to the projection and vectors.db. */
  private refresh(id: string): void {
    const state = this.statements.entryState.get(id);
    const code = state ? this.statements.codeOf.get(this.options.model, state.content_hash) : undefined;
    if (!state || !code) {
      const pool = state?.pool ?? this.statements.hashOf.get(id)?.pool;
      if (pool !== undefined) this.index.remove(id, pool);
      return;
    }
    this.index.set({
      id,
      pool: state.pool,
      hash: state.content_hash,
      code: codeFromBlob(code.code),
      archived: state.is_archived === 1,
      category: state.category,
    });
  }

  private forget(id: string): void {
    const hash = this.statements.hashOf.get(id)?.content_hash;
    this.statements.deleteEntry.run(id);
    if (hash !== undefined && (this.statements.hashInUse.get(hash)?.n ?? 0) === 0) {
      this.statements.deleteVectors.run(hash);
      this.statements.deleteCodes.run(hash);
    }
  }

  /** Codes for vectors stored without one (before codes existed, or under another scheme). */
  private backfillCodes(): void {
    if (this.statements.setting.get('code_scheme')?.value !== BINARY_CODE_SCHEME) {
      this.db.transaction(() => {
        this.db.exec('DELETE FROM vectors.codes');
        this.statements.setSetting.run('code_scheme', BINARY_CODE_SCHEME);
      })();
    }
    let made = 0;
    for (;;) {
      const rows = this.statements.vectorsWithoutCode.all(CODE_BACKFILL_CHUNK);
      if (rows.length === 0) break;
      this.db.transaction(() => {
        for (const row of rows) {
          const vector = new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength));
          this.statements.upsertCode.run(row.model, row.content_hash, codeToBlob(binaryCode(vector)));
        }
      })();
      made += rows.length;
    }
    if (made > 0) this.options.logger.info({ codes: made, scheme: BINARY_CODE_SCHEME }, 'computed the binary codes of stored vectors');
  }

  /**
   * Vectors of a model no longer configured answer no search. They are kept while the configured
   * model has not embedded every active entry yet (a switch back meanwhile costs no endpoint call),
   * and deleted once it has.
   */
  private dropOtherModelsIfCovered(): void {
    if (!this.otherModels) return;
    if (this.statements.anyMissing.get(this.options.model) !== undefined) return;
    let vectors = 0;
    this.db.transaction(() => {
      vectors = this.statements.deleteOtherVectors.run(this.options.model).changes;
      this.statements.deleteOtherCodes.run(this.options.model);
    })();
    this.otherModels = false;
    this.db.pragma('vectors.incremental_vacuum');
    this.options.logger.info(
      { model: this.options.model, deleted: vectors },
      "deleted the vectors of models no longer configured: the configured model's cover every entry",
    );
  }
}

/** How many active entries there are, and how many of them have no vector of the model. */
export interface VectorCoverage {
  readonly model: string;
  readonly entries: number;
  readonly missing: number;
}

/**
 * For `engram verify`: which active entries have no vector of `model` in the vectors file (read
 * beside nothing: verify holds the data dir). No file: none has one.
 */
export function vectorCoverage(
  path: string,
  key: AtRestKey,
  model: string,
  entries: Iterable<{ readonly content: string; readonly isArchived: boolean }>,
): VectorCoverage {
  const hashes = new Set<string>();
  if (existsSync(path)) {
    const db = openReadOnlyDatabase(path, key);
    try {
      const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'").get() !== undefined;
      if (hasTable) {
        for (const row of db.prepare<[string], { content_hash: string }>('SELECT content_hash FROM embeddings WHERE model = ?').iterate(model)) {
          hashes.add(row.content_hash);
        }
      }
    } finally {
      db.close();
    }
  }
  let active = 0;
  let missing = 0;
  for (const entry of entries) {
    if (entry.isArchived) continue;
    active++;
    if (!hashes.has(contentHash(entry.content))) missing++;
  }
  return { model, entries: active, missing };
}
