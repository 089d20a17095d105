import {
  EngramHttpError,
  MEMORY_TOOLS,
  type MemoryToolExecutor,
  clientError,
  internalError,
  parseJsonBody,
  relay,
  runTurn,
  type TurnContext,
  type WireAdapter,
} from '@engram/engine';
import type { Logger } from '@engram/observability';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpSink } from '../http/http-sink.js';
import type { ExtractionQueueRepository } from '../repositories/extraction-queue.repository.js';
import type { MetricsRepository } from '../repositories/metrics.repository.js';
import type { UpstreamRepository } from '../repositories/upstream.repository.js';
import type { AccessService } from './access.service.js';
import type { MemoryGate } from './memory-gate.service.js';

/** One client-facing API (OpenAI Chat, Anthropic Messages, OpenAI Responses) on the shared engine. */
export interface Surface<R> {
  /** Label for metrics, e.g. 'chat.completions'. */
  readonly route: string;
  readonly adapter: WireAdapter<R>;
  readonly upstream: UpstreamRepository;
}

export interface TurnServiceDeps {
  readonly access: AccessService;
  readonly gate: MemoryGate;
  readonly tools: MemoryToolExecutor;
  readonly extraction: ExtractionQueueRepository;
  readonly metrics: MetricsRepository;
  readonly logger: Logger;
  readonly maxIterations: number;
}

/**
 * Serves one model request on any surface: access and pool, body, then either the memory turn
 * (Tier 1 + tools + loop) or a verbatim relay when memory is off for this request or unavailable.
 * The reply is hijacked: every byte goes out through an HttpSink.
 */
export class TurnService {
  private readonly observer;

  constructor(private readonly deps: TurnServiceDeps) {
    const metrics = deps.metrics;
    this.observer = {
      upstreamLatency: (seconds: number) => metrics.upstreamSeconds(seconds),
      memoryRound: () => metrics.memoryRound(),
      error: (kind: 'upstream' | 'upstream_status' | 'client_abort' | 'internal') => metrics.error(kind),
      internalError: (error: unknown) =>
        deps.logger.error({ err: error instanceof Error ? error.stack : String(error) }, 'request failed inside Engram'),
    };
  }

  async handle<R>(surface: Surface<R>, request: FastifyRequest, reply: FastifyReply, pathPool: string | undefined): Promise<void> {
    void reply.hijack();
    const requestId = request.id;
    const sink = new HttpSink(reply.raw, requestId);
    reply.raw.once('finish', () => this.deps.metrics.request(surface.route, reply.raw.statusCode));

    const access = this.deps.access.resolve(request.headers, pathPool);
    if (access.error) return this.reject(surface, sink, access.error);
    const pool = access.pool;

    const raw = request.body;
    let parsed: R;
    try {
      parsed = surface.adapter.parseRequest(parseJsonBody(raw));
    } catch (error) {
      return this.reject(surface, sink, error instanceof EngramHttpError ? error : clientError(400, 'invalid request body', 'invalid_body'));
    }

    const upstream = surface.upstream.forClient(request.headers, requestId);
    const context: TurnContext = { pool, requestId };
    // The request id travels explicitly (context, job data, log fields), not in an AsyncLocalStorage:
    // on Node 20 that would turn on promise hooks for every promise of every request.
    await this.serve(surface, parsed, raw as Buffer, context, upstream, request.headers['x-engram-memory'] !== 'off', sink).catch(
      (error: unknown) => {
        // A bug on one request answers that request with a 500; it never reaches the process.
        this.deps.metrics.error('internal');
        this.deps.logger.error({ err: error instanceof Error ? error.stack : String(error), requestId }, 'request failed');
        if (sink.started) return sink.abort();
        const failure = internalError();
        sink.respond(500, JSON_HEADERS, JSON.stringify(surface.adapter.errorBody ? surface.adapter.errorBody(failure) : failure.body()));
      },
    );
  }

  private async serve<R>(
    surface: Surface<R>,
    parsed: R,
    raw: Buffer,
    context: TurnContext,
    upstream: ReturnType<UpstreamRepository['forClient']>,
    memoryOn: boolean,
    sink: HttpSink,
  ): Promise<void> {
    const { pool, requestId } = context;
    const path = surface.adapter.upstreamPath(parsed);
    const wanted = memoryOn && surface.adapter.supportsMemory(parsed);
    const tier1 = wanted ? await this.deps.gate.tier1(pool, requestId) : null;
    if (tier1 === null) {
      if (wanted) this.deps.metrics.error('memory_unavailable');
      await relay(() => upstream.post(path, raw, sink.signal), sink, {
        onError: this.observer.error,
        onInternalError: this.observer.internalError,
        ...(surface.adapter.errorBody ? { errorBody: (error) => surface.adapter.errorBody?.(error) } : {}),
      });
      return;
    }
    const withMemory = surface.adapter.withMemory(parsed, {
      tier1Block: tier1.block,
      tools: this.deps.maxIterations > 0 ? MEMORY_TOOLS : [],
    });
    if (tier1.block !== '') this.deps.metrics.tier1Injected(tier1.block.length);
    await runTurn(
      surface.adapter,
      withMemory,
      { ...context, tier1Ids: tier1.ids },
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

  private reject<R>(surface: Surface<R>, sink: HttpSink, error: EngramHttpError): void {
    this.deps.metrics.error(error.status === 401 || error.status === 403 ? 'auth' : 'bad_request');
    const body = surface.adapter.errorBody ? surface.adapter.errorBody(error) : error.body();
    sink.respond(error.status, JSON_HEADERS, JSON.stringify(body));
  }
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
