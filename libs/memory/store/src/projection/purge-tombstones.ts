import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3-multiple-ciphers';
import { normalizedFact, type MemoryEvent } from '@engram/domain';
import type { DatabaseMeta } from '../database/database-meta.js';

/**
 * What purges forbid, as the projection holds it from the `memory.purged` events: the ids purged (a
 * store under one again is refused: an Idempotency-Key retry must not bring an entry back) and, per
 * pool, the fingerprints of the purged texts (a store from a conversation still in flight is refused,
 * whichever order it arrives in). A fingerprint is a hash of the pool and the normalised text, never
 * the text: nothing here can give back what a purge forgot.
 */
export const PURGE_TOMBSTONES_SQL = `
CREATE TABLE IF NOT EXISTS purged_ids (id TEXT PRIMARY KEY, pool TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS purged_texts (pool TEXT NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (pool, fingerprint)) WITHOUT ROWID;
-- Last seq the two tables cover; behind last_seq only in a database made before they existed.
INSERT OR IGNORE INTO meta (key, value) VALUES ('tombstones_seq', 0);
`;

/**
 * The fingerprint of a text in a pool: the same for every spelling that normalizedFact folds together
 * (case, accents, punctuation, spacing), undefined for a text with no words.
 */
export function textFingerprint(pool: string, text: string): string | undefined {
  const fact = normalizedFact(text);
  if (fact === '') return undefined;
  return createHash('sha256').update(`${pool}\n${fact}`).digest('hex');
}

/**
 * The tables, and a copy of them in memory: every store asks whether its id or text is forbidden,
 * and purges are rare, so the answer is a set lookup (no SQLite read, no hash when the pool has no
 * purged text) instead of a statement per store. The copy follows the tables: written with them,
 * and read again from them after a transaction that failed.
 */
export class PurgeTombstones {
  private readonly statements;
  private coveredSeqValue: number;
  private ids = new Set<string>();
  /** Fingerprints of purged texts, by pool. */
  private texts = new Map<string, Set<string>>();

  constructor(
    private readonly db: Database.Database,
    private readonly meta: DatabaseMeta,
  ) {
    db.exec(PURGE_TOMBSTONES_SQL);
    this.statements = {
      addId: db.prepare<[string, string]>('INSERT OR IGNORE INTO purged_ids (id, pool) VALUES (?, ?)'),
      addText: db.prepare<[string, string]>('INSERT OR IGNORE INTO purged_texts (pool, fingerprint) VALUES (?, ?)'),
      allIds: db.prepare<[], { id: string }>('SELECT id FROM purged_ids'),
      allTexts: db.prepare<[], { pool: string; fingerprint: string }>('SELECT pool, fingerprint FROM purged_texts'),
      // Rows a purge removed that a store under the same id (logged before such stores were refused) made again.
      resurrected: db.prepare<[], { id: string }>('SELECT id FROM memories WHERE id IN (SELECT id FROM purged_ids)'),
    };
    this.coveredSeqValue = meta.get('tombstones_seq');
    this.load();
  }

  /** Last seq the tombstones cover. */
  get coveredSeq(): number {
    return this.coveredSeqValue;
  }

  /**
   * Records a purge among the events; call inside the applying transaction, event by event, with the
   * seq the database was at before it. Skipped while the tombstones are behind the database (one made
   * before they existed: backfilled at start).
   */
  note(event: MemoryEvent, previous: number): void {
    if (this.coveredSeqValue !== previous || event.seq <= previous) return;
    if (event.type === 'memory.purged') {
      this.statements.addId.run(event.data.id, event.pool);
      this.ids.add(event.data.id);
      for (const fingerprint of event.data.forbids ?? []) {
        this.statements.addText.run(event.pool, fingerprint);
        this.fingerprintsOf(event.pool).add(fingerprint);
      }
    }
    this.coveredSeqValue = event.seq;
  }

  /** Stores how far the tombstones cover; call at the end of the applying transaction. */
  save(): void {
    if (this.meta.get('tombstones_seq') !== this.coveredSeqValue) this.meta.set('tombstones_seq', this.coveredSeqValue);
  }

  /** Covers events the database already holds, in a transaction of their own (a database made before tombstones). */
  backfill(events: readonly MemoryEvent[]): void {
    this.db
      .transaction(() => {
        for (const event of events) this.note(event, this.coveredSeqValue);
        this.save();
      })
      .immediate();
  }

  /** After a failed transaction: the tombstones are what the database holds. */
  reload(): void {
    this.coveredSeqValue = this.meta.get('tombstones_seq');
    this.load();
  }

  isPurged(id: string): boolean {
    return this.ids.has(id);
  }

  /** Whether a purge in the pool forbids this text (see textFingerprint). */
  forbids(pool: string, text: string): boolean {
    const fingerprints = this.texts.get(pool);
    if (!fingerprints) return false;
    const fingerprint = textFingerprint(pool, text);
    return fingerprint !== undefined && fingerprints.has(fingerprint);
  }

  private load(): void {
    this.ids = new Set(this.statements.allIds.all().map((row) => row.id));
    this.texts = new Map();
    for (const row of this.statements.allTexts.all()) this.fingerprintsOf(row.pool).add(row.fingerprint);
  }

  private fingerprintsOf(pool: string): Set<string> {
    let fingerprints = this.texts.get(pool);
    if (!fingerprints) {
      fingerprints = new Set();
      this.texts.set(pool, fingerprints);
    }
    return fingerprints;
  }

  /** Ids of entries the database holds although a purge removed them (see `resurrected`). */
  resurrectedIds(): string[] {
    return this.statements.resurrected.all().map((row) => row.id);
  }
}
