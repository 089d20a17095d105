import { MemoryError, type Tier1Response } from '@engram/contracts';
import type { Tier1Cache } from '@engram/engine';
import type { Logger } from '@engram/observability';

/**
 * Fail open: memory that does not answer makes a request go out without memory, never fail.
 * After a failure the gateway stops asking for `retryAfterMs`, so an outage costs requests no
 * waiting, and the outage is logged once when it starts and once when it ends.
 */
export class MemoryGate {
  private downUntil = 0;
  private down = false;

  constructor(
    private readonly cache: Tier1Cache,
    private readonly logger: Logger,
    private readonly options: { readonly retryAfterMs: number; readonly cacheTrusted: () => boolean },
  ) {}

  get available(): boolean {
    return !this.down;
  }

  /** The pool's Tier 1, or null when memory is unavailable (the request then goes out without memory). */
  async tier1(pool: string, requestId: string): Promise<Tier1Response | null> {
    if (this.down && Date.now() < this.downUntil) return null;
    // Without the change announcements a cached block may be stale: ask every time.
    if (!this.options.cacheTrusted()) this.cache.evict(pool);
    try {
      const value = await this.cache.get(pool, requestId);
      if (this.down) {
        this.down = false;
        this.logger.info('memory service answers again: memory is back on');
      }
      return value;
    } catch (error) {
      this.markDown(error);
      return null;
    }
  }

  private markDown(error: unknown): void {
    this.downUntil = Date.now() + this.options.retryAfterMs;
    if (this.down) return;
    this.down = true;
    const code = error instanceof MemoryError ? error.code : 'internal';
    this.logger.warn({ code, err: (error as Error).message }, 'memory service unavailable: proxying without memory until it answers');
  }
}
