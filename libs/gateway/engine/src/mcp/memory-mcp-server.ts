import { MemoryError, MemoryPattern } from '@engram/contracts';
import type { MemoryEntry } from '@engram/domain';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Resource,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { MemoryToolExecutor } from '../memory-tool-executor.js';
import { MEMORY_TOOLS } from '../memory-tools.js';
import type { MemoryPort } from '../ports.js';
import type { ToolResult, TurnContext } from '../turn.js';

/** JSON-RPC code the MCP specification gives a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;
/** Entries per `resources/list` page; the cursor is the offset of the next page. */
const RESOURCE_PAGE = 100;

export interface MemoryMcpDeps {
  readonly memory: MemoryPort;
  /** The gateway's own executor: MCP clients get the very tools, results and citations the model gets. */
  readonly tools: Pick<MemoryToolExecutor, 'run'>;
  /** Told after every tool call (for the logs). */
  readonly onToolCall?: (result: ToolResult, ms: number) => void;
}

export const tier1Uri = (pool: string): string => `engram://pools/${pool}/tier1`;
export const memoryUri = (pool: string, id: string): string => `engram://pools/${pool}/memories/${id}`;

/**
 * An MCP server for one pool and one HTTP request (stateless Streamable HTTP: every request gets a
 * fresh server, so any gateway instance can answer any request). Tools are the six memory tools,
 * run with actor `mcp`; their failures are tool results with `isError`, which the model reads.
 * Resources are the pool's Tier 1 block and its active entries.
 */
export function createMemoryMcpServer(context: TurnContext, deps: MemoryMcpDeps): Server {
  const { pool, requestId } = context;
  const server = new Server(
    { name: 'engram', title: 'Engram memory', version: '0.1.0' },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: `Long-term memory of the pool "${pool}". Read ${tier1Uri(pool)} for the facts that always matter; memory_search finds the rest. Results cite ids as [id:...]; pass those ids to memory_update, memory_delete and memory_refresh.`,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: MEMORY_TOOLS.map((tool): Tool => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters as Tool['inputSchema'],
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const started = performance.now();
    // JSON-RPC ids restart at 0 in every session, so alone they would make two sessions' stores of one text one
    // entry (the executor derives the idempotency key from the call id); with the HTTP request id, a retried POST
    // that keeps its x-request-id still stores once.
    const call = {
      id: `mcp:${requestId}:${String(extra.requestId)}`,
      name: request.params.name,
      arguments: JSON.stringify(request.params.arguments ?? {}),
    };
    const result = await deps.tools.run(call, context, 'mcp');
    deps.onToolCall?.(result, performance.now() - started);
    return { content: [{ type: 'text', text: result.content }], isError: result.isError === true };
  });

  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const offset = pageOffset(request.params?.cursor);
    const entries = await memoryCall(() => deps.memory.call(MemoryPattern.List, { pool, limit: RESOURCE_PAGE, offset, requestId }));
    const resources: Resource[] = entries.map((entry) => entryResource(pool, entry));
    if (offset === 0)
      resources.unshift({
        uri: tier1Uri(pool),
        name: 'tier1',
        title: `Tier 1 memory of ${pool}`,
        description: 'The facts injected into every prompt of this pool.',
        mimeType: 'text/plain',
      });
    return { resources, ...(entries.length === RESOURCE_PAGE ? { nextCursor: String(offset + RESOURCE_PAGE) } : {}) };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: `engram://pools/${pool}/memories/{id}`,
        name: 'memory',
        title: 'One memory entry',
        description: 'An entry of this pool by id (from an [id:...] citation).',
        mimeType: 'application/json',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const target = parseUri(uri);
    if (!target || target.pool !== pool) {
      throw new McpError(
        RESOURCE_NOT_FOUND,
        `No resource ${uri} here: this connection serves ${tier1Uri(pool)} and engram://pools/${pool}/memories/<id>.`,
        { uri },
      );
    }
    if (target.id === undefined) {
      const tier1 = await memoryCall(() => deps.memory.call(MemoryPattern.Tier1, { pool, requestId }));
      return { contents: [{ uri, mimeType: 'text/plain', text: tier1.block }] };
    }
    const id = target.id;
    const entry = await memoryCall(() => deps.memory.call(MemoryPattern.Get, { pool, id }), uri);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(entry, null, 2) }] };
  });

  return server;
}

function entryResource(pool: string, entry: MemoryEntry): Resource {
  return {
    uri: memoryUri(pool, entry.id),
    name: entry.id,
    title: entry.content.length > 80 ? `${entry.content.slice(0, 79)}…` : entry.content,
    description: [entry.type, entry.category].filter(Boolean).join(', '),
    mimeType: 'application/json',
  };
}

function parseUri(uri: string): { pool: string; id?: string } | undefined {
  const match = /^engram:\/\/pools\/([^/]+)\/(?:tier1|memories\/([^/]+))$/.exec(uri);
  if (!match) return undefined;
  return match[2] === undefined ? { pool: match[1]! } : { pool: match[1]!, id: match[2] };
}

function pageOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor)) throw new McpError(ErrorCode.InvalidParams, `invalid cursor ${JSON.stringify(cursor)}`);
  return Number(cursor);
}

/** Memory failures as MCP errors a client can show: not found, or memory unavailable. */
async function memoryCall<T>(call: () => Promise<T>, uri?: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof MemoryError && error.code === 'not_found' && uri !== undefined)
      throw new McpError(RESOURCE_NOT_FOUND, `No memory at ${uri}.`, { uri });
    if (error instanceof MemoryError && error.code === 'invalid_request') throw new McpError(ErrorCode.InvalidParams, error.message);
    throw new McpError(ErrorCode.InternalError, 'Memory is unavailable right now.');
  }
}
