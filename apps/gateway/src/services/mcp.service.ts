import { Inject, Injectable } from '@nestjs/common';
import {
  createMemoryMcpServer,
  EngramHttpError,
  mcpOriginAllowed,
  parseJsonBody,
  type MemoryPort,
  type MemoryToolExecutor,
} from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGGER, MEMORY_CLIENT, MEMORY_TOOL_EXECUTOR } from '../gateway.tokens.js';
import { MetricsRepository } from '../repositories/metrics.repository.js';
import { AccessService } from './access.service.js';

export interface McpServiceDeps {
  readonly access: AccessService;
  readonly memory: MemoryPort;
  readonly tools: Pick<MemoryToolExecutor, 'run'>;
  readonly metrics: MetricsRepository;
  readonly logger: Logger;
}

/**
 * MCP over Streamable HTTP, stateless: each POST is answered by a fresh server bound to the
 * request's pool, with a plain JSON response (no session, no server-sent stream), so any gateway
 * instance behind a load balancer can serve any request. Keys and pools as on every surface.
 */
@Injectable()
export class McpService {
  private readonly deps: McpServiceDeps;

  constructor(
    @Inject(AccessService) access: AccessService,
    @Inject(MEMORY_CLIENT) memory: MemoryPort,
    @Inject(MEMORY_TOOL_EXECUTOR) tools: McpServiceDeps['tools'],
    @Inject(MetricsRepository) metrics: MetricsRepository,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.deps = { access, memory, tools, metrics, logger };
  }

  async handle(request: FastifyRequest, reply: FastifyReply, pathPool: string | undefined): Promise<void> {
    const origin = request.headers.origin;
    if (!mcpOriginAllowed(origin)) {
      this.deps.logger.warn({ requestId: request.id, origin }, 'mcp request from a web page that is not on this machine refused');
      await reply
        .status(403)
        .header('content-type', 'application/json')
        .send(jsonRpcError(-32000, 'Forbidden: MCP requests from web pages are only accepted from localhost origins.'));
      return;
    }
    const access = this.deps.access.resolve(request.headers, pathPool);
    if (access.error) {
      this.deps.metrics.error(access.error.status === 401 || access.error.status === 403 ? 'auth' : 'bad_request');
      if (access.error.status === 401) void reply.header('www-authenticate', bearerChallenge(request));
      throw access.error;
    }
    if (request.method !== 'POST') {
      // Stateless: no session to delete, no stream for server-initiated messages (the client expects 405 then).
      await reply
        .status(405)
        .header('allow', 'POST')
        .header('content-type', 'application/json')
        .send(jsonRpcError(-32000, 'Method not allowed: this server is stateless, send JSON-RPC messages with POST.'));
      return;
    }
    let message: unknown;
    try {
      // The same limits as every other body (depth included), answered in JSON-RPC's words.
      message = parseJsonBody(request.body);
    } catch (error) {
      if (!(error instanceof EngramHttpError)) throw error;
      await reply
        .status(400)
        .header('content-type', 'application/json')
        .send(jsonRpcError(-32700, `Parse error: ${error.message}.`));
      return;
    }

    const requestId = request.id;
    const pool = access.pool;
    const server = createMemoryMcpServer(
      { pool, requestId },
      {
        memory: this.deps.memory,
        tools: this.deps.tools,
        onToolCall: (result, ms) =>
          this.deps.logger.info({ requestId, pool, tool: result.name, isError: result.isError === true, ms: Math.round(ms) }, 'mcp tool call'),
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    void reply.hijack();
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    reply.raw.once('finish', () => this.deps.metrics.request('mcp', reply.raw.statusCode));
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, message);
  }

  /**
   * MCP clients meet a 401 with OAuth discovery, and without metadata they fall back to dynamic client
   * registration at `/register` (the SDK's legacy path). Engram has no OAuth: the discovery documents
   * stay 404 (unrouted), and the registration is refused with an OAuth error whose description the
   * client shows, saying which header to configure instead of "registration failed".
   */
  async refuseClientRegistration(reply: FastifyReply): Promise<void> {
    await reply.status(404).header('content-type', 'application/json').send(JSON.stringify(NO_OAUTH));
  }
}

const NO_OAUTH = {
  error: 'invalid_request',
  error_description:
    'Engram does not use OAuth: configure this MCP server with the header "Authorization: Bearer <Engram API key>" (a missing or wrong key is answered 401).',
};

/** RFC 6750: the scheme and realm, and `invalid_token` when a key was presented but is not one of ENGRAM_API_KEYS. */
function bearerChallenge(request: FastifyRequest): string {
  const presented = request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined;
  return presented ? 'Bearer realm="engram", error="invalid_token"' : 'Bearer realm="engram"';
}

function jsonRpcError(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
}
