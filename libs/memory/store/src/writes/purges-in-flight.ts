import { textFingerprint } from '../projection/purge-tombstones.js';

/**
 * Purges written but not yet applied: between a purge's decision and its tombstones reaching the
 * database (PurgeTombstones), a store must already see what it forbids, or a retry arriving at that
 * moment would be stored again under the purged id.
 */
export class PurgesInFlight {
  private readonly ids = new Map<string, number>();
  private readonly texts = new Map<string, number>();

  /** Registers a purge; the returned function releases it once its events are applied (or refused). */
  add(pool: string, id: string, fingerprints: readonly string[]): () => void {
    const keys = fingerprints.map((fingerprint) => `${pool}\n${fingerprint}`);
    increment(this.ids, id);
    for (const key of keys) increment(this.texts, key);
    return () => {
      decrement(this.ids, id);
      for (const key of keys) decrement(this.texts, key);
    };
  }

  hasId(id: string): boolean {
    return this.ids.has(id);
  }

  forbids(pool: string, text: string): boolean {
    if (this.texts.size === 0) return false;
    const fingerprint = textFingerprint(pool, text);
    return fingerprint !== undefined && this.texts.has(`${pool}\n${fingerprint}`);
  }
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
