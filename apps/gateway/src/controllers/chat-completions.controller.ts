import { Controller, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SURFACES } from '../gateway.tokens.js';
import { takeOver } from '../http/client-call.js';
import type { Surfaces } from '../services/surface-request.js';
import { TurnService } from '../services/turn.service.js';

/** OpenAI Chat Completions, at the root or under a pool prefix. */
@Controller()
export class ChatCompletionsController {
  constructor(
    @Inject(TurnService) private readonly turns: TurnService,
    @Inject(SURFACES) private readonly surfaces: Surfaces,
  ) {}

  @Post('v1/chat/completions')
  create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.turns.handle(this.surfaces.chat, takeOver(request, reply), undefined);
  }

  @Post('pools/:pool/v1/chat/completions')
  createInPool(@Param('pool') pool: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.turns.handle(this.surfaces.chat, takeOver(request, reply), pool);
  }
}
