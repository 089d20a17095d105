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
/**
 * Words of each code's first stage: 512 of its bits, themselves a binary code of the vector (each bit
 * is one random hyperplane's side), which estimates the angle more coarsely at a quarter of the cost.
 */
const PREFIX_WORDS = 16;
/** The first stage keeps this many entries for each candidate asked for; their full codes choose among them. */
const PREFIX_KEEP_FACTOR = 10;

/**
 * One pool's entries in slots: codes side by side in one array, so a scan walks memory in order, and
 * their prefixes side by side in another, so the first stage reads only them.
 */
class PoolSlots {
  ids: string[] = [];
  hashes: string[] = [];
  archived: boolean[] = [];
  categories: (Category | null)[] = [];
  codes: Int32Array;
  prefixes: Int32Array;
  readonly prefixWords: number;
  readonly slotOf = new Map<string, number>();

  constructor(readonly words: number) {
    this.prefixWords = Math.min(PREFIX_WORDS, words);
    this.codes = new Int32Array(INITIAL_SLOTS * words);
    this.prefixes = new Int32Array(INITIAL_SLOTS * this.prefixWords);
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
        const grownPrefixes = new Int32Array(this.prefixes.length * 2);
        grownPrefixes.set(this.prefixes);
        this.prefixes = grownPrefixes;
      }
      this.slotOf.set(entry.id, slot);
    }
    this.ids[slot] = entry.id;
    this.hashes[slot] = entry.hash;
    this.archived[slot] = entry.archived;
    this.categories[slot] = entry.category;
    this.codes.set(entry.code, slot * this.words);
    this.prefixes.set(entry.code.subarray(0, this.prefixWords), slot * this.prefixWords);
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
      this.prefixes.copyWithin(slot * this.prefixWords, last * this.prefixWords, (last + 1) * this.prefixWords);
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
   * In a pool of more than PREFIX_KEEP_FACTOR x `count` entries, a first stage counts the differing
   * bits of the codes' prefixes and keeps the closest PREFIX_KEEP_FACTOR x `count`, among which the
   * full codes choose; smaller pools, and an exact scan (`count` infinite), compare full codes only.
   * Each stage counts the bits in one pass, finds its cut in a histogram of the distances and
   * collects in a second pass: linear in the pool's size, whatever `count` is.
   */
  candidates(query: CandidateQuery): Candidate[] {
    const slots = this.pools.get(query.pool);
    if (!slots || slots.size === 0) return [];
    if (query.code.length !== slots.words) {
      throw new Error(`the query's code has ${query.code.length * 32} bits, the pool's codes ${slots.words * 32}: vectors of another size`);
    }
    const category = query.category ?? null;
    const size = slots.size;
    const keep = query.count * PREFIX_KEEP_FACTOR;
    const { prefixes, prefixWords } = slots;
    // Entries the filters exclude get a distance past every real one, and are never chosen.
    const excluded = (keep < size ? prefixWords : slots.words) * 32 + 1;
    const distances = new Uint16Array(size);
    for (let slot = 0; slot < size; slot++) {
      const eligible = (query.includeArchived || !slots.archived[slot]) && (category === null || slots.categories[slot] === category);
      distances[slot] = !eligible ? excluded : keep < size ? hammingDistance(query.code, prefixes, slot * prefixWords, prefixWords) : 0;
    }
    const chosen = closest(distances, keep, excluded);
    for (let i = 0; i < chosen.length; i++) distances[i] = hammingDistance(query.code, slots.codes, chosen[i]! * slots.words);
    const found: Candidate[] = [];
    for (const i of closest(distances.subarray(0, chosen.length), query.count, slots.words * 32 + 1)) {
      const slot = chosen[i]!;
      found.push({ id: slots.ids[slot]!, hash: slots.hashes[slot]! });
    }
    return found;
  }
}

/**
 * The indexes of the `count` smallest distances (all when there are fewer; ties at the cut too), in
 * order, leaving out those at `excluded`. A histogram of the distances finds the cut: linear, whatever `count` is.
 */
function closest(distances: Uint16Array, count: number, excluded: number): Int32Array {
  const histogram = new Uint32Array(excluded + 1);
  for (let i = 0; i < distances.length; i++) histogram[distances[i]!]!++;
  let cut = 0;
  for (let seen = histogram[0]!; seen < count && cut < excluded - 1; ) seen += histogram[++cut]!;
  let kept = 0;
  for (let i = 0; i < distances.length; i++) if (distances[i]! <= cut) kept++;
  const chosen = new Int32Array(kept);
  kept = 0;
  for (let i = 0; i < distances.length; i++) if (distances[i]! <= cut) chosen[kept++] = i;
  return chosen;
}
