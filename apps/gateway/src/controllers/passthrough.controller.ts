import { All, Controller, Inject, Param, Req, Res } from '@nestjs/common';
import { EngramHttpError, passthroughPath, relay } from '@engram/gateway-engine';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SURFACES } from '../gateway.tokens.js';
import { takeOver } from '../http/client-call.js';
import { AccessService } from '../services/access.service.js';
import { SurfaceRequest, type Surfaces } from '../services/surface-request.js';

/**
 * Every `/v1/...` endpoint Engram does not own (models, embeddings, files, batches, stored
 * responses, ...): passed through with its method, query, body and answer untouched, behind the
 * same keys and pools, so a tool can point its whole base URL here. Anthropic clients (they
 * always send `anthropic-version`, e.g. Claude Code on ANTHROPIC_BASE_URL) reach the Anthropic
 * upstream. The router prefers the owned routes (chat completions, messages, responses) to these.
 */
@Controller()
export class PassthroughController {
  constructor(
    @Inject(AccessService) private readonly access: AccessService,
    @Inject(SURFACES) private readonly surfaces: Surfaces,
  ) {}

  @All('v1/*')
  forward(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.relay(request, reply, undefined);
  }

  @All('pools/:pool/v1/*')
  forwardInPool(@Param('pool') pool: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.relay(request, reply, pool);
  }

  private async relay(fastifyRequest: FastifyRequest, reply: FastifyReply, pool: string | undefined): Promise<void> {
    const call = takeOver(fastifyRequest, reply);
    const anthropic = call.headers['anthropic-version'] !== undefined;
    const request = anthropic ? new SurfaceRequest(this.surfaces.messages, call) : new SurfaceRequest(this.surfaces.chat, call);
    if (request.pool(this.access, pool) === null) return;
    let clientPath: string;
    try {
      // The server's upstream key goes with it: the path may never leave /v1/ on the upstream.
      clientPath = passthroughPath(call.url, pool);
    } catch (error) {
      if (error instanceof EngramHttpError) return request.refuse(error);
      throw error;
    }
    // OpenAI's base URL ends in /v1 (UPSTREAM_BASE_URL), Anthropic's does not.
    const upstreamPath = anthropic ? clientPath : clientPath.slice('/v1'.length);
    const body = call.body.length > 0 ? call.body : null;
    const upstream = request.upstream();
    await relay(() => upstream.forward(call.method, upstreamPath, body, call.sink.signal), call.sink, { errorBody: request.errorBody });
  }
}
