import { Inject, Injectable } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { relay, runTurn, type EngramHttpError, type ExtractionPort, type MemoryToolExecutor, type TurnObserver } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import type { ClientCall } from '../http/client-call.js';
import { CONFIG, LOGGER, MEMORY_TOOL_EXECUTOR } from '../gateway.tokens.js';
import { ExtractionQueueRepository } from '../repositories/extraction-queue.repository.js';
import { MetricsRepository } from '../repositories/metrics.repository.js';
import { AccessService } from './access.service.js';
import { MemoryInjection } from './memory-injection.js';
import { SurfaceRequest, type Surface } from './surface-request.js';

export interface TurnServiceDeps {
  readonly access: Pick<AccessService, 'resolve'>;
  readonly memory: Pick<MemoryInjection, 'add'>;
  readonly tools: Pick<MemoryToolExecutor, 'run'>;
  readonly extraction: ExtractionPort;
  readonly metrics: Pick<MetricsRepository, 'request' | 'upstreamSeconds' | 'memoryRound' | 'tier1Injected' | 'error'>;
  readonly logger: Logger;
  readonly maxIterations: number;
}

/**
 * Serves one model request on any surface: access and pool, body, then either the memory turn
 * (Tier 1 + tools + loop) or a verbatim relay when memory is off for this request or unavailable.
 */
@Injectable()
export class TurnService {
  private readonly observer: TurnObserver;
  private readonly deps: TurnServiceDeps;

  constructor(
    @Inject(AccessService) access: TurnServiceDeps['access'],
    @Inject(MemoryInjection) memory: TurnServiceDeps['memory'],
    @Inject(MEMORY_TOOL_EXECUTOR) tools: TurnServiceDeps['tools'],
    @Inject(ExtractionQueueRepository) extraction: ExtractionPort,
    @Inject(MetricsRepository) metrics: TurnServiceDeps['metrics'],
    @Inject(LOGGER) logger: Logger,
    @Inject(CONFIG) config: Pick<EngramConfig, 'memoryToolMaxIterations'>,
  ) {
    const deps = { access, memory, tools, extraction, metrics, logger, maxIterations: config.memoryToolMaxIterations };
    this.deps = deps;
    this.observer = {
      upstreamLatency: (seconds) => metrics.upstreamSeconds(seconds),
      memoryRound: () => metrics.memoryRound(),
      error: (kind) => metrics.error(kind),
      internalError: (error) => deps.logger.error({ err: error instanceof Error ? error.stack : String(error) }, 'request failed inside Engram'),
    };
  }

  private readonly refused = (error: EngramHttpError): void =>
    this.deps.metrics.error(error.status === 401 || error.status === 403 ? 'auth' : 'bad_request');

  async handle<R>(surface: Surface<R>, call: ClientCall, pathPool: string | undefined): Promise<void> {
    call.onFinished((status) => this.deps.metrics.request(surface.route, status));
    const request = new SurfaceRequest(surface, call, this.refused);
    const pool = request.pool(this.deps.access, pathPool);
    if (pool === null) return;
    const parsed = request.parse();
    if (parsed === null) return;
    // The request id travels explicitly (context, job data, log fields), not in an AsyncLocalStorage:
    // on Node 20 that would turn on promise hooks for every promise of every request.
    await this.serve(request, parsed, pool).catch((error: unknown) => {
      // A bug on one request answers that request with a 500; it never reaches the process.
      this.deps.metrics.error('internal');
      this.deps.logger.error({ err: error instanceof Error ? error.stack : String(error), requestId: call.id }, 'request failed');
      request.fail();
    });
  }

  private async serve<R>(request: SurfaceRequest<R>, parsed: R, pool: string): Promise<void> {
    const { adapter } = request.surface;
    const { id: requestId, sink } = request.call;
    const upstream = request.upstream();
    const wanted = request.wantsMemory(parsed);
    const added = wanted ? this.deps.memory.add(adapter, parsed, pool, requestId) : null;
    // Awaited only when memory was asked: a cached Tier 1 costs no turn of the event loop.
    const withMemory = added instanceof Promise ? await added : added;
    if (withMemory === null) {
      if (wanted) this.deps.metrics.error('memory_unavailable');
      const path = adapter.upstreamPath(parsed);
      await relay(() => upstream.post(path, request.call.body, sink.signal), sink, {
        onError: this.observer.error,
        onInternalError: this.observer.internalError,
        errorBody: request.errorBody,
      });
      return;
    }
    const { tier1 } = withMemory;
    if (tier1.block !== '') this.deps.metrics.tier1Injected(tier1.block.length);
    await runTurn(
      adapter,
      withMemory.request,
      { pool, requestId, tier1Ids: tier1.ids },
      {
        upstream,
        tools: this.deps.tools,
        extraction: this.deps.extraction,
        maxIterations: this.deps.maxIterations,
        observer: this.observer,
      },
      sink,
    );
  }
}
