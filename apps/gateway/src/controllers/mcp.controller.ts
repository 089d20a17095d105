import { All, Controller, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { McpService } from '../services/mcp.service.js';

/** MCP (Streamable HTTP) with the memory tools, at the root or under a pool prefix. */
@Controller()
export class McpController {
  constructor(@Inject(McpService) private readonly mcp: McpService) {}

  @All('mcp')
  serve(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.mcp.handle(request, reply, undefined);
  }

  @All('pools/:pool/mcp')
  serveInPool(@Param('pool') pool: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.mcp.handle(request, reply, pool);
  }

  /** Where MCP clients try dynamic client registration after a 401 (see McpService.refuseClientRegistration). */
  @Post('register')
  refuseClientRegistration(@Res() reply: FastifyReply): Promise<void> {
    return this.mcp.refuseClientRegistration(reply);
  }
}
