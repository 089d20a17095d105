import { clientError, EngramHttpError, internalError, MEMORY_TOOLS, parseJsonBody, relay, type AnthropicRequest } from '@engram/engine';
import type { Logger } from '@engram/observability';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpSink } from '../http/http-sink.js';
import type { AccessService } from './access.service.js';
import type { MemoryGate } from './memory-gate.service.js';
import type { Surface } from './turn.service.js';

export interface TokenCountDeps {
  readonly access: AccessService;
  readonly gate: MemoryGate;
  readonly maxIterations: number;
  readonly logger: Logger;
}

const COUNT_PATH = '/v1/messages/count_tokens';

/**
 * `POST /v1/messages/count_tokens`: the count of what Engram will really send, so Claude Code's
 * context accounting includes the Tier 1 block and the memory tools. No model turn runs; the
 * upstream's answer is relayed as it is. Without memory (off, or unavailable) the body goes as sent,
 * once it passed the same checks as every other surface's.
 */
export class TokenCountService {
  constructor(private readonly deps: TokenCountDeps) {}

  async handle(surface: Surface<AnthropicRequest>, request: FastifyRequest, reply: FastifyReply, pathPool: string | undefined): Promise<void> {
    void reply.hijack();
    const sink = new HttpSink(reply.raw, request.id);
    const errorBody = (error: EngramHttpError): unknown => surface.adapter.errorBody?.(error) ?? error.body();
    const reject = (error: EngramHttpError): void => sink.respond(error.status, JSON_HEADERS, JSON.stringify(errorBody(error)));
    const logInternal = (error: unknown): void =>
      this.deps.logger.error({ err: error instanceof Error ? error.stack : String(error), requestId: request.id }, 'request failed inside Engram');

    try {
      const access = this.deps.access.resolve(request.headers, pathPool);
      if (access.error) return reject(access.error);
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      let body: string | Uint8Array = raw;
      // Checked like every surface's body, memory on or off: a body too deep for Engram is refused here, not upstream.
      let parsed: AnthropicRequest;
      try {
        parsed = surface.adapter.parseRequest(parseJsonBody(raw));
      } catch (error) {
        return reject(error instanceof EngramHttpError ? error : clientError(400, 'the request body is not valid JSON', 'invalid_json'));
      }
      if (request.headers['x-engram-memory'] !== 'off') {
        const tier1 = await this.deps.gate.tier1(access.pool, request.id);
        if (tier1 !== null) {
          const tools = this.deps.maxIterations > 0 ? MEMORY_TOOLS : [];
          body = surface.adapter.serializeRequest(surface.adapter.withMemory(parsed, { tier1Block: tier1.block, tools }));
        }
      }
      const upstream = surface.upstream.forClient(request.headers, request.id);
      await relay(() => upstream.post(COUNT_PATH, body, sink.signal), sink, { errorBody, onInternalError: logInternal });
    } catch (error) {
      // A bug answers this request with a 500 in Anthropic's shape; the socket is never just cut.
      logInternal(error);
      if (sink.started) return sink.abort();
      reject(internalError());
    }
  }
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
