import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { relay, type EngramHttpError } from '@engram/engine';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpSink } from '../http/http-sink.js';
import { ACCESS_SERVICE, SURFACES } from '../gateway.tokens.js';
import type { AccessService } from '../services/access.service.js';
import type { Surfaces } from './chat-completions.controller.js';

/**
 * `GET /v1/models`: a pass-through, behind the same keys. Anthropic clients (they always send
 * `anthropic-version`, e.g. Claude Code on ANTHROPIC_BASE_URL) get the Anthropic upstream's list.
 */
@Controller()
export class ModelsController {
  constructor(
    @Inject(ACCESS_SERVICE) private readonly access: AccessService,
    @Inject(SURFACES) private readonly surfaces: Surfaces,
  ) {}

  @Get('v1/models')
  list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.relay(request, reply, undefined);
  }

  @Get('pools/:pool/v1/models')
  listInPool(@Param('pool') pool: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.relay(request, reply, pool);
  }

  private async relay(request: FastifyRequest, reply: FastifyReply, pool: string | undefined): Promise<void> {
    void reply.hijack();
    const sink = new HttpSink(reply.raw, request.id);
    const anthropic = request.headers['anthropic-version'] !== undefined;
    const surface = anthropic ? this.surfaces.messages : this.surfaces.chat;
    const errorBody = (error: EngramHttpError): unknown => surface.adapter.errorBody?.(error) ?? error.body();
    const access = this.access.resolve(request.headers, pool);
    if (access.error) {
      sink.respond(access.error.status, { 'content-type': 'application/json' }, JSON.stringify(errorBody(access.error)));
      return;
    }
    const upstream = surface.upstream.forClient(request.headers, request.id);
    await relay(() => upstream.get(anthropic ? '/v1/models' : '/models', sink.signal), sink, { errorBody });
  }
}
