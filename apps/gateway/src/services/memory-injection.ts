import { Inject, Injectable } from '@nestjs/common';
import type { Tier1Response } from '@engram/contracts';
import type { MemoryToolDefinition, WireAdapter } from '@engram/gateway-engine';
import { OFFERED_TOOLS } from '../gateway.tokens.js';
import { MemoryGate } from './memory-gate.service.js';

/** A request with the pool's memory in it, and the Tier 1 it carries. */
export interface WithMemory<R> {
  readonly request: R;
  readonly tier1: Tier1Response;
}

/**
 * What memory adds to a model request, the same for a turn and for a token count: the pool's
 * Tier 1 block in the system prompt and the memory tools offered (none when the loop may run no
 * memory round), through the surface's adapter.
 */
@Injectable()
export class MemoryInjection {
  constructor(
    @Inject(MemoryGate) private readonly gate: Pick<MemoryGate, 'tier1'>,
    @Inject(OFFERED_TOOLS) private readonly tools: readonly MemoryToolDefinition[],
  ) {}

  /**
   * The request with memory added; null when memory is unavailable, so the request goes out without it
   * (fail open). At once when the gate has the pool's Tier 1 cached (most requests), else a promise.
   */
  add<R>(adapter: WireAdapter<R>, request: R, pool: string, requestId: string): WithMemory<R> | null | Promise<WithMemory<R> | null> {
    const tier1 = this.gate.tier1(pool, requestId);
    return tier1 instanceof Promise ? tier1.then((got) => this.with(adapter, request, got)) : this.with(adapter, request, tier1);
  }

  private with<R>(adapter: WireAdapter<R>, request: R, tier1: Tier1Response | null): WithMemory<R> | null {
    if (tier1 === null) return null;
    return { request: adapter.withMemory(request, { tier1Block: tier1.block, tools: this.tools }), tier1 };
  }
}
