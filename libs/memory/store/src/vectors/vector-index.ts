import type { Category } from '@engram/domain';
import { hammingDistance } from './binary-code.js';

/** An entry as the index holds it: its text (by hash), its binary code, what a search filters on. */
export interface IndexedEntry {
  readonly id: string;
  readonly pool: string;
  readonly hash: string;
  readonly code: Int32Array;
  readonly archived: boolean;
  readonly category: Category | null;
}

export interface CandidateQuery {
  readonly pool: string;
  readonly code: Int32Array;
  /** How many to return at least (all the pool's matching entries when it has fewer); ties at the cut come along. */
  readonly count: number;
  readonly includeArchived: boolean;
  readonly category?: Category;
}

export interface Candidate {
  readonly id: string;
  readonly hash: string;
}

const INITIAL_SLOTS = 64;

/** One pool's entries in slots: codes side by side in one array, so a scan walks memory in order. */
class PoolSlots {
  ids: string[] = [];
  hashes: string[] = [];
  archived: boolean[] = [];
  categories: (Category | null)[] = [];
  codes: Int32Array;
  readonly slotOf = new Map<string, number>();

  constructor(readonly words: number) {
    this.codes = new Int32Array(INITIAL_SLOTS * words);
  }

  get size(): number {
    return this.ids.length;
  }

  set(entry: IndexedEntry): void {
    let slot = this.slotOf.get(entry.id);
    if (slot === undefined) {
      slot = this.ids.length;
      if ((slot + 1) * this.words > this.codes.length) {
        const grown = new Int32Array(this.codes.length * 2);
        grown.set(this.codes);
        this.codes = grown;
      }
      this.slotOf.set(entry.id, slot);
    }
    this.ids[slot] = entry.id;
    this.hashes[slot] = entry.hash;
    this.archived[slot] = entry.archived;
    this.categories[slot] = entry.category;
    this.codes.set(entry.code, slot * this.words);
  }

  /** The last slot moves into the freed one. */
  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    const last = this.ids.length - 1;
    if (slot !== last) {
      this.ids[slot] = this.ids[last]!;
      this.hashes[slot] = this.hashes[last]!;
      this.archived[slot] = this.archived[last]!;
      this.categories[slot] = this.categories[last]!;
      this.codes.copyWithin(slot * this.words, last * this.words, (last + 1) * this.words);
      this.slotOf.set(this.ids[slot], slot);
    }
    this.ids.pop();
    this.hashes.pop();
    this.archived.pop();
    this.categories.pop();
    this.slotOf.delete(id);
  }
}

/**
 * The binary codes of the configured model's vectors, in memory, by pool: the first stage of a
 * vector search. A search scans only its pool's codes (a pool's memory is never seen from another),
 * counts differing bits (Hamming distance) against the query's code, and returns the closest
 * entries, which the caller ranks again by exact cosine. Rebuilt from vectors.db at start; kept
 * current by the vector store after every commit and every stored vector. ~300 bytes an entry at
 * 1,536 dimensions (a 2,048-bit code, id and hash).
 */
export class VectorIndex {
  private readonly pools = new Map<string, PoolSlots>();

  /** 32-bit words per code; fixed by the first code, so codes of another length are refused. */
  private words: number | undefined;

  get codeWords(): number | undefined {
    return this.words;
  }

  size(pool?: string): number {
    if (pool !== undefined) return this.pools.get(pool)?.size ?? 0;
    let total = 0;
    for (const slots of this.pools.values()) total += slots.size;
    return total;
  }

  has(id: string, pool: string): boolean {
    return this.pools.get(pool)?.slotOf.has(id) ?? false;
  }

  set(entry: IndexedEntry): void {
    this.words ??= entry.code.length;
    if (entry.code.length !== this.words) throw new Error(`a code of ${entry.code.length} words in an index of ${this.words}-word codes`);
    let slots = this.pools.get(entry.pool);
    if (!slots) {
      slots = new PoolSlots(this.words);
      this.pools.set(entry.pool, slots);
    }
    slots.set(entry);
  }

  remove(id: string, pool: string): void {
    const slots = this.pools.get(pool);
    slots?.remove(id);
    if (slots?.size === 0) this.pools.delete(pool);
  }

  clear(): void {
    this.pools.clear();
    this.words = undefined;
  }

  /**
   * The `count` entries of the pool whose codes are closest to the query's (fewer when the pool has
   * fewer; more when several share the distance at the cut), among those the filters let through.
   * One pass counts the bits, a histogram of the distances finds the cut, a second pass collects:
   * linear in the pool's size, whatever `count` is.
   */
  candidates(query: CandidateQuery): Candidate[] {
    const slots = this.pools.get(query.pool);
    if (!slots || slots.size === 0) return [];
    if (query.code.length !== slots.words) {
      throw new Error(`the query's code has ${query.code.length * 32} bits, the pool's codes ${slots.words * 32}: vectors of another size`);
    }
    const category = query.category ?? null;
    const eligible = (slot: number): boolean =>
      (query.includeArchived || !slots.archived[slot]) && (category === null || slots.categories[slot] === category);
    const maxDistance = slots.words * 32;
    const distances = new Uint16Array(slots.size);
    const histogram = new Uint32Array(maxDistance + 2);
    for (let slot = 0; slot < slots.size; slot++) {
      // Entries the filters exclude are pushed past every real distance.
      const distance = eligible(slot) ? hammingDistance(query.code, slots.codes, slot * slots.words) : maxDistance + 1;
      distances[slot] = distance;
      histogram[distance]!++;
    }
    let cut = 0;
    for (let seen = 0; cut <= maxDistance; cut++) {
      seen += histogram[cut]!;
      if (seen >= query.count) break;
    }
    const found: Candidate[] = [];
    for (let slot = 0; slot < slots.size; slot++) {
      if (distances[slot]! <= Math.min(cut, maxDistance)) found.push({ id: slots.ids[slot]!, hash: slots.hashes[slot]! });
    }
    return found;
  }
}
