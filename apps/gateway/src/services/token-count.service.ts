import { Inject, Injectable } from '@nestjs/common';
import { relay, type AnthropicRequest } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import type { ClientCall } from '../http/client-call.js';
import { LOGGER } from '../gateway.tokens.js';
import { AccessService } from './access.service.js';
import { MemoryInjection } from './memory-injection.js';
import { SurfaceRequest, type Surface } from './surface-request.js';

export interface TokenCountDeps {
  readonly access: Pick<AccessService, 'resolve'>;
  readonly memory: Pick<MemoryInjection, 'add'>;
  readonly logger: Logger;
}

const COUNT_PATH = '/v1/messages/count_tokens';

/**
 * `POST /v1/messages/count_tokens`: the count of what Engram will really send, so Claude Code's
 * context accounting includes the Tier 1 block and the memory tools. No model turn runs; the
 * upstream's answer is relayed as it is. Without memory (off, or unavailable) the body goes as sent,
 * once it passed the same checks as every other surface's.
 */
@Injectable()
export class TokenCountService {
  private readonly deps: TokenCountDeps;

  constructor(
    @Inject(AccessService) access: TokenCountDeps['access'],
    @Inject(MemoryInjection) memory: TokenCountDeps['memory'],
    @Inject(LOGGER) logger: Logger,
  ) {
    this.deps = { access, memory, logger };
  }

  async handle(surface: Surface<AnthropicRequest>, call: ClientCall, pathPool: string | undefined): Promise<void> {
    const request = new SurfaceRequest(surface, call);
    const logInternal = (error: unknown): void =>
      this.deps.logger.error({ err: error instanceof Error ? error.stack : String(error), requestId: call.id }, 'request failed inside Engram');

    try {
      const pool = request.pool(this.deps.access, pathPool);
      if (pool === null) return;
      // Checked like every surface's body, memory on or off: a body too deep for Engram is refused here, not upstream.
      const parsed = request.parse();
      if (parsed === null) return;
      let body: string | Uint8Array = call.body;
      if (request.wantsMemory(parsed)) {
        const withMemory = await this.deps.memory.add(surface.adapter, parsed, pool, call.id);
        if (withMemory !== null) body = surface.adapter.serializeRequest(withMemory.request);
      }
      const upstream = request.upstream();
      await relay(() => upstream.post(COUNT_PATH, body, call.sink.signal), call.sink, { errorBody: request.errorBody, onInternalError: logInternal });
    } catch (error) {
      // A bug answers this request with a 500 in Anthropic's shape; the socket is never just cut.
      logInternal(error);
      request.fail();
    }
  }
}
