import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { parseJsonBody } from '@engram/gateway-engine';
import type { FastifyRequest } from 'fastify';
import { AccessService } from '../services/access.service.js';
import { MemoryRestService } from '../services/memory-rest.service.js';

/** Memory REST (docs/DESIGN.md, "Gateway HTTP surface"): same keys and pool rules as the model endpoints. */
@Controller('engram/pools/:pool')
export class MemoriesController {
  constructor(
    @Inject(AccessService) private readonly access: AccessService,
    @Inject(MemoryRestService) private readonly memories: MemoryRestService,
  ) {}

  @Get('memories')
  list(@Param('pool') pool: string, @Query() query: unknown, @Req() request: FastifyRequest): Promise<unknown> {
    return this.memories.list(this.pool(request, pool), query, request.id);
  }

  @Post('memories')
  @HttpCode(201)
  create(@Param('pool') pool: string, @Body() body: unknown, @Query() query: unknown, @Req() request: FastifyRequest): Promise<unknown> {
    return this.memories.create(this.pool(request, pool), json(body), query, request.id, request.headers['idempotency-key']);
  }

  @Get('memories/:id')
  get(@Param('pool') pool: string, @Param('id') id: string, @Req() request: FastifyRequest): Promise<unknown> {
    return this.memories.get(this.pool(request, pool), id);
  }

  @Patch('memories/:id')
  update(@Param('pool') pool: string, @Param('id') id: string, @Body() body: unknown, @Req() request: FastifyRequest): Promise<unknown> {
    return this.memories.update(this.pool(request, pool), id, json(body), request.id);
  }

  @Delete('memories/:id')
  remove(
    @Param('pool') pool: string,
    @Param('id') id: string,
    @Query('purge') purge: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<unknown> {
    return this.memories.remove(this.pool(request, pool), id, purge === 'true', request.id);
  }

  @Get('tier1')
  tier1(@Param('pool') pool: string, @Query() query: unknown, @Req() request: FastifyRequest): Promise<unknown> {
    return this.memories.tier1WithQuery(this.pool(request, pool), query, request.id);
  }

  @Get('events')
  events(@Param('pool') pool: string, @Query() query: unknown, @Req() request: FastifyRequest): Promise<unknown> {
    return this.memories.events(this.pool(request, pool), query, request.id);
  }

  private pool(request: FastifyRequest, pathPool: string): string {
    const access = this.access.resolve(request.headers, pathPool);
    if (access.error) throw access.error;
    return access.pool;
  }
}

/** Bodies arrive as raw bytes (the gateway parses JSON itself); an empty body is `{}`. */
function json(body: unknown): unknown {
  return parseJsonBody(body, { emptyAs: {} });
}
