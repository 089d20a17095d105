import { clientError, EngramHttpError, MEMORY_TOOLS, relay, type AnthropicRequest } from '@engram/engine';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpSink } from '../http/http-sink.js';
import type { AccessService } from './access.service.js';
import type { MemoryGate } from './memory-gate.service.js';
import type { Surface } from './turn.service.js';

export interface TokenCountDeps {
  readonly access: AccessService;
  readonly gate: MemoryGate;
  readonly maxIterations: number;
}

const COUNT_PATH = '/v1/messages/count_tokens';

/**
 * `POST /v1/messages/count_tokens`: the count of what Engram will really send, so Claude Code's
 * context accounting includes the Tier 1 block and the memory tools. No model turn runs; the
 * upstream's answer is relayed as it is. Without memory (off, or unavailable) the body goes as sent.
 */
export class TokenCountService {
  constructor(private readonly deps: TokenCountDeps) {}

  async handle(surface: Surface<AnthropicRequest>, request: FastifyRequest, reply: FastifyReply, pathPool: string | undefined): Promise<void> {
    void reply.hijack();
    const sink = new HttpSink(reply.raw, request.id);
    const errorBody = (error: EngramHttpError): unknown => surface.adapter.errorBody?.(error) ?? error.body();
    const reject = (error: EngramHttpError): void => sink.respond(error.status, JSON_HEADERS, JSON.stringify(errorBody(error)));

    const access = this.deps.access.resolve(request.headers, pathPool);
    if (access.error) return reject(access.error);
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let body: string | Uint8Array = raw;
    if (request.headers['x-engram-memory'] !== 'off') {
      let parsed: AnthropicRequest;
      try {
        parsed = surface.adapter.parseRequest(JSON.parse(raw.toString('utf8')));
      } catch (error) {
        return reject(error instanceof EngramHttpError ? error : clientError(400, 'the request body is not valid JSON', 'invalid_json'));
      }
      const tier1 = await this.deps.gate.tier1(access.pool, request.id);
      if (tier1 !== null) {
        const tools = this.deps.maxIterations > 0 ? MEMORY_TOOLS : [];
        body = surface.adapter.serializeRequest(surface.adapter.withMemory(parsed, { tier1Block: tier1.block, tools }));
      }
    }
    const upstream = surface.upstream.forClient(request.headers, request.id);
    await relay(() => upstream.post(COUNT_PATH, body, sink.signal), sink, { errorBody });
  }
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
