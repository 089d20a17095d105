import {
  clientError,
  EngramHttpError,
  internalError,
  parseJsonBody,
  type AnthropicRequest,
  type ChatRequest,
  type ResponsesRequest,
  type WireAdapter,
} from '@engram/gateway-engine';
import type { ClientCall } from '../http/client-call.js';
import type { UpstreamRepository } from '../repositories/upstream.repository.js';
import type { AccessService } from './access.service.js';

/** One client-facing API (OpenAI Chat, Anthropic Messages, OpenAI Responses) on the shared engine. */
export interface Surface<R> {
  /** Label for metrics, e.g. 'chat.completions'. */
  readonly route: string;
  readonly adapter: WireAdapter<R>;
  readonly upstream: Pick<UpstreamRepository, 'forClient'>;
}

export interface Surfaces {
  readonly chat: Surface<ChatRequest>;
  readonly messages: Surface<AnthropicRequest>;
  readonly responses: Surface<ResponsesRequest>;
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * What every request on a surface starts with, once its reply is taken over: who calls and on
 * which pool, the body as the surface's adapter reads it, and every refusal answered in the
 * surface's own error shape (Anthropic's for Anthropic clients, OpenAI's otherwise).
 */
export class SurfaceRequest<R> {
  constructor(
    readonly surface: Surface<R>,
    readonly call: ClientCall,
    /** Told of every refusal before it is answered (for metrics). */
    private readonly onRefused: (error: EngramHttpError) => void = () => undefined,
  ) {}

  /** The pool the request works on; null once a missing key or a pool it may not use was answered (401/403/400). */
  pool(access: Pick<AccessService, 'resolve'>, pathPool: string | undefined): string | null {
    const decision = access.resolve(this.call.headers, pathPool);
    if (decision.error) {
      this.refuse(decision.error);
      return null;
    }
    return decision.pool;
  }

  /** The body as the adapter reads it; null once a body it cannot use was answered with a 400. */
  parse(): R | null {
    try {
      return this.surface.adapter.parseRequest(parseJsonBody(this.call.body));
    } catch (error) {
      this.refuse(error instanceof EngramHttpError ? error : clientError(400, 'invalid request body', 'invalid_body'));
      return null;
    }
  }

  /** False when the client said `x-engram-memory: off`, or the adapter cannot run this request with memory (it is relayed). */
  wantsMemory(request: R): boolean {
    return this.call.headers['x-engram-memory'] !== 'off' && this.surface.adapter.supportsMemory(request);
  }

  /** The surface's upstream, with this client's headers and credentials. */
  upstream(): ReturnType<UpstreamRepository['forClient']> {
    return this.surface.upstream.forClient(this.call.headers, this.call.id);
  }

  /** The format's error body, for a relay that fails before it answered. */
  readonly errorBody = (error: EngramHttpError): unknown => this.surface.adapter.errorBody(error);

  /** Answers `error` in the surface's shape. */
  refuse(error: EngramHttpError): void {
    this.onRefused(error);
    this.call.sink.respond(error.status, JSON_HEADERS, JSON.stringify(this.errorBody(error)));
  }

  /** A bug on this request: a 500 in the surface's shape, or a cut connection once the answer has begun. */
  fail(): void {
    if (this.call.sink.started) this.call.sink.abort();
    else this.call.sink.respond(500, JSON_HEADERS, JSON.stringify(this.errorBody(internalError())));
  }
}
