import { All, Controller, Inject, Param, Req, Res } from '@nestjs/common';
import { EngramHttpError, passthroughPath, relay } from '@engram/engine';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpSink } from '../http/http-sink.js';
import { ACCESS_SERVICE, SURFACES } from '../gateway.tokens.js';
import type { AccessService } from '../services/access.service.js';
import type { Surfaces } from './chat-completions.controller.js';

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
    @Inject(ACCESS_SERVICE) private readonly access: AccessService,
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

  private async relay(request: FastifyRequest, reply: FastifyReply, pool: string | undefined): Promise<void> {
    void reply.hijack();
    const sink = new HttpSink(reply.raw, request.id);
    const anthropic = request.headers['anthropic-version'] !== undefined;
    const surface = anthropic ? this.surfaces.messages : this.surfaces.chat;
    const errorBody = (error: EngramHttpError): unknown => surface.adapter.errorBody?.(error) ?? error.body();
    const refuse = (error: EngramHttpError): void =>
      sink.respond(error.status, { 'content-type': 'application/json' }, JSON.stringify(errorBody(error)));
    const access = this.access.resolve(request.headers, pool);
    if (access.error) return refuse(access.error);
    let clientPath: string;
    try {
      // The server's upstream key goes with it: the path may never leave /v1/ on the upstream.
      clientPath = passthroughPath(request.url, pool);
    } catch (error) {
      if (error instanceof EngramHttpError) return refuse(error);
      throw error;
    }
    // OpenAI's base URL ends in /v1 (UPSTREAM_BASE_URL), Anthropic's does not.
    const upstreamPath = anthropic ? clientPath : clientPath.slice('/v1'.length);
    const body = Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : null;
    const upstream = surface.upstream.forClient(request.headers, request.id);
    await relay(() => upstream.forward(request.method, upstreamPath, body, sink.signal), sink, { errorBody });
  }
}
