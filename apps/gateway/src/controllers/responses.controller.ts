import { Controller, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { takeOver } from '../http/client-call.js';
import { SURFACES } from '../gateway.tokens.js';
import { TurnService } from '../services/turn.service.js';
import type { Surfaces } from '../services/surface-request.js';

/** OpenAI Responses for Codex CLI (`wire_api = "responses"`), at the root or under a pool prefix. */
@Controller()
export class ResponsesController {
  constructor(
    @Inject(TurnService) private readonly turns: TurnService,
    @Inject(SURFACES) private readonly surfaces: Surfaces,
  ) {}

  @Post('v1/responses')
  create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.turns.handle(this.surfaces.responses, takeOver(request, reply), undefined);
  }

  @Post('pools/:pool/v1/responses')
  createInPool(@Param('pool') pool: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.turns.handle(this.surfaces.responses, takeOver(request, reply), pool);
  }
}
