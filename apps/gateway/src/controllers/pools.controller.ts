import { Controller, Get, Inject, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ACCESS_SERVICE, MEMORY_REST_SERVICE } from '../gateway.tokens.js';
import type { AccessService } from '../services/access.service.js';
import type { MemoryRestService } from '../services/memory-rest.service.js';

/** `GET /engram/pools`: the pools the presented key reaches, for the console's first page. */
@Controller('engram/pools')
export class PoolsController {
  constructor(
    @Inject(ACCESS_SERVICE) private readonly access: AccessService,
    @Inject(MEMORY_REST_SERVICE) private readonly memories: MemoryRestService,
  ) {}

  @Get()
  list(@Req() request: FastifyRequest): Promise<unknown> {
    const grant = this.access.grant(request.headers);
    if ('error' in grant) throw grant.error;
    return this.memories.pools(grant, request.id);
  }
}
