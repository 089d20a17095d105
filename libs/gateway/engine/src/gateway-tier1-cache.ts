import { MemoryPattern, type MemoryChangedMessage, type Tier1Response } from '@engram/contracts';
import type { MemoryPort } from './ports.js';

interface Cached {
  readonly value: Tier1Response;
  readonly expiresAt: number;
}

/**
 * The gateway's copy of each pool's Tier 1 block (the memory service builds it: Tier1Blocks), kept in
 * process so a request pays no memory round trip. Dropped when the memory service announces a
 * change (pub/sub), when the model writes, and after a short TTL as a safety net for a lost
 * announcement. Concurrent misses for one pool share one fetch, and a
 * fetch that raced an eviction is not cached.
 */
export class GatewayTier1Cache {
  private readonly entries = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<Tier1Response>>();
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly memory: MemoryPort,
    private readonly options: { readonly ttlMs: number; readonly now?: () => number },
  ) {}

  /** The pool's block; throws the memory service's MemoryError when it cannot be had. */
  get(pool: string, requestId: string): Promise<Tier1Response> | Tier1Response {
    const cached = this.entries.get(pool);
    if (cached && cached.expiresAt > this.now()) return cached.value;
    return this.inflight.get(pool) ?? this.fetch(pool, requestId);
  }

  evict(pool: string): void {
    this.entries.delete(pool);
    this.generations.set(pool, (this.generations.get(pool) ?? 0) + 1);
  }

  /** A `{"pool","seq"}` announcement: drop the pool's block unless it already reflects that seq. */
  changed(message: MemoryChangedMessage): void {
    const cached = this.entries.get(message.pool);
    if (!cached || cached.value.seq < message.seq) this.evict(message.pool);
  }

  /** Drop everything (e.g. after missing announcements while Redis was away). */
  clear(): void {
    for (const pool of [...this.entries.keys(), ...this.inflight.keys()]) this.evict(pool);
  }

  private async fetch(pool: string, requestId: string): Promise<Tier1Response> {
    const generation = this.generations.get(pool) ?? 0;
    const pending = this.memory.call(MemoryPattern.Tier1, { pool, requestId });
    this.inflight.set(pool, pending);
    try {
      const value = await pending;
      if ((this.generations.get(pool) ?? 0) === generation) {
        this.entries.set(pool, { value, expiresAt: this.now() + this.options.ttlMs });
      }
      return value;
    } finally {
      this.inflight.delete(pool);
    }
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}
