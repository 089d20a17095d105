import { Controller, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { takeOver } from '../http/client-call.js';
import { SURFACES } from '../gateway.tokens.js';
import { TokenCountService } from '../services/token-count.service.js';
import { TurnService } from '../services/turn.service.js';
import type { Surfaces } from '../services/surface-request.js';

/** Anthropic Messages for Claude Code (`ANTHROPIC_BASE_URL`), at the root or under a pool prefix. */
@Controller()
export class AnthropicMessagesController {
  constructor(
    @Inject(TurnService) private readonly turns: TurnService,
    @Inject(TokenCountService) private readonly tokenCounts: TokenCountService,
    @Inject(SURFACES) private readonly surfaces: Surfaces,
  ) {}

  @Post('v1/messages')
  create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.turns.handle(this.surfaces.messages, takeOver(request, reply), undefined);
  }

  @Post('pools/:pool/v1/messages')
  createInPool(@Param('pool') pool: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.turns.handle(this.surfaces.messages, takeOver(request, reply), pool);
  }

  @Post('v1/messages/count_tokens')
  countTokens(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.tokenCounts.handle(this.surfaces.messages, takeOver(request, reply), undefined);
  }

  @Post('pools/:pool/v1/messages/count_tokens')
  countTokensInPool(@Param('pool') pool: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.tokenCounts.handle(this.surfaces.messages, takeOver(request, reply), pool);
  }
}
