import { Controller, Get, Inject, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccessService } from '../services/access.service.js';
import { MemoryRestService } from '../services/memory-rest.service.js';

/** `GET /engram/pools`: the pools the presented key reaches, for the console's first page. */
@Controller('engram/pools')
export class PoolsController {
  constructor(
    @Inject(AccessService) private readonly access: AccessService,
    @Inject(MemoryRestService) private readonly memories: MemoryRestService,
  ) {}

  @Get()
  list(@Req() request: FastifyRequest): Promise<unknown> {
    const grant = this.access.grant(request.headers);
    if ('error' in grant) throw grant.error;
    return this.memories.pools(grant, request.id);
  }
}
