import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { MemoryError, type Tier1Response } from '@engram/contracts';
import type { GatewayTier1Cache } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import { LOGGER, MEMORY_GATE_OPTIONS, TIER1_CACHE } from '../gateway.tokens.js';

export interface MemoryGateOptions {
  /** After a failure, requests skip memory this long before asking again. */
  readonly retryAfterMs: number;
  /** How often memory is pinged in the background, so a cached Tier 1 never hides an outage. */
  readonly probeEveryMs: number;
  /** False while change announcements cannot arrive (Redis away): then the cache is not trusted. */
  readonly cacheTrusted: () => boolean;
  readonly ping: () => Promise<unknown>;
}

/**
 * Fail open: memory that does not answer makes a request go out without memory, never fail.
 * After a failure (on a request or in the background probe) requests skip memory without waiting
 * until it answers again, and the outage is logged once when it starts and once when it ends.
 */
@Injectable()
export class MemoryGate implements OnApplicationBootstrap, OnModuleDestroy {
  private downUntil = 0;
  private down = false;
  private probe: NodeJS.Timeout | undefined;

  constructor(
    @Inject(TIER1_CACHE) private readonly cache: GatewayTier1Cache,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(MEMORY_GATE_OPTIONS) private readonly options: MemoryGateOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.start();
  }

  onModuleDestroy(): void {
    this.stop();
  }

  start(): void {
    this.probe = setInterval(() => {
      this.options.ping().then(
        () => this.markUp(),
        (error: unknown) => this.markDown(error),
      );
    }, this.options.probeEveryMs);
    this.probe.unref();
  }

  stop(): void {
    clearInterval(this.probe);
  }

  /**
   * The pool's Tier 1, or null when memory is unavailable (the request then goes out without memory);
   * at once when the cache holds it, a promise when memory is asked.
   */
  tier1(pool: string, requestId: string): Tier1Response | null | Promise<Tier1Response | null> {
    if (this.down && Date.now() < this.downUntil) return null;
    // Without the change announcements a cached block may be stale: ask every time.
    if (!this.options.cacheTrusted()) this.cache.evict(pool);
    const got = this.cache.get(pool, requestId);
    if (!(got instanceof Promise)) {
      this.markUp();
      return got;
    }
    return got.then(
      (value) => {
        this.markUp();
        return value;
      },
      (error: unknown) => {
        this.markDown(error, requestId);
        return null;
      },
    );
  }

  private markUp(): void {
    if (!this.down) return;
    this.down = false;
    this.cache.clear();
    this.logger.info('memory service answers again: memory is back on');
  }

  private markDown(error: unknown, requestId?: string): void {
    this.downUntil = Date.now() + this.options.retryAfterMs;
    if (this.down) return;
    this.down = true;
    const code = error instanceof MemoryError ? error.code : 'internal';
    this.logger.warn(
      { code, err: (error as Error).message, ...(requestId ? { requestId } : {}) },
      'memory service unavailable: proxying without memory until it answers',
    );
  }
}
