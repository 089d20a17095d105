import type { ResponsesItem } from './responses-types.js';

interface Pending {
  readonly items: readonly ResponsesItem[];
  readonly expiresAt: number;
}

/**
 * Outputs of memory calls made in a response that also asked the client for its own calls.
 * The upstream stored that response with the memory calls in it; when the client continues
 * with `previous_response_id`, their outputs must go along, or the upstream rejects the request
 * ("No tool output found for function call"). Kept in process, bounded, for a while: a client
 * that continues later, or on another gateway instance, loses them (and the upstream says so).
 */
export class PendingMemoryOutputs {
  private readonly entries = new Map<string, Pending>();

  constructor(
    private readonly options: { readonly maxEntries: number; readonly ttlMs: number; readonly now?: () => number } = {
      maxEntries: 10_000,
      ttlMs: 3_600_000,
    },
  ) {}

  keep(responseId: string, items: readonly ResponsesItem[]): void {
    if (items.length === 0) return;
    this.entries.delete(responseId);
    this.entries.set(responseId, { items, expiresAt: this.now() + this.options.ttlMs });
    // Maps iterate in insertion order: the first key is the oldest.
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** The outputs owed to a continuation of `responseId` (once: a retry of the same request is sent them again). */
  owedTo(responseId: string): readonly ResponsesItem[] {
    const pending = this.entries.get(responseId);
    if (!pending) return [];
    if (pending.expiresAt <= this.now()) {
      this.entries.delete(responseId);
      return [];
    }
    return pending.items;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}
