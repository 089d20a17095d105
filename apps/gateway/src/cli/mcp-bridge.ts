import { Command, InvalidArgumentError, Option } from 'commander';
import { isValidPoolName } from '@engram/domain';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { pino, type Logger } from 'pino';
import { loadConfig } from '@engram/config';

interface McpOptions {
  readonly url: URL;
  readonly pool?: string;
  readonly key?: string;
}

/**
 * `engram mcp --url URL [--pool P] [--key K]`: MCP over stdio for clients that only launch local
 * commands, relayed message by message to the gateway's Streamable HTTP endpoint. It opens no data
 * dir and takes no lock: the memory service stays the one writer.
 */
export function mcpCommand(): Command {
  return new Command('mcp')
    .description('serve Engram memory to an MCP client over stdio, through a running gateway')
    .requiredOption('--url <url>', 'the gateway, e.g. http://localhost:8080', gatewayUrl)
    .option('--pool <pool>', "the pool (default: the key's first pool, or default)", poolName)
    .addOption(new Option('--key <key>', 'an Engram API key, when the gateway has ENGRAM_API_KEYS').env('ENGRAM_API_KEY'))
    .action((options: McpOptions) => bridge(options));
}

function gatewayUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an http(s) URL such as http://localhost:8080');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('expected an http(s) URL such as http://localhost:8080');
  return url;
}

function poolName(value: string): string {
  if (!isValidPoolName(value))
    throw new InvalidArgumentError('a pool name is lowercase letters, digits, ".", "_" and "-" (^[a-z0-9][a-z0-9._-]{0,63}$)');
  return value;
}

/** `http://host:8080` → `http://host:8080/mcp`, or `/pools/<pool>/mcp` with a pool. */
export function mcpEndpoint(base: URL, pool: string | undefined): URL {
  const root = base.href.replace(/\/+$/, '');
  return new URL(pool ? `${root}/pools/${pool}/mcp` : `${root}/mcp`);
}

/** As the memory service's CLI logs: JSON on stderr (warn and up by default); stdout is the MCP stream. */
function cliLogger(): Logger {
  const level = process.env['LOG_LEVEL'] ? loadConfig(process.env).logLevel : 'warn';
  return pino({ level, base: { service: 'engram-cli' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
}

async function bridge(options: McpOptions): Promise<void> {
  const logger = cliLogger();
  const endpoint = mcpEndpoint(options.url, options.pool);
  const http = new StreamableHTTPClientTransport(
    endpoint,
    options.key ? { requestInit: { headers: { authorization: `Bearer ${options.key}` } } } : {},
  );
  const stdio = new StdioServerTransport();
  const initializeIds = new Set<RequestId>();
  // Once the client hangs up, requests still in flight are cut on purpose: nothing to report.
  let closing = false;

  http.onmessage = (message) => {
    // The gateway checks the negotiated revision on every later request; the SDK's Client would tell its transport, so the bridge does.
    if (isJSONRPCResultResponse(message) && initializeIds.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') http.setProtocolVersion(version);
    }
    void stdio.send(message);
  };
  // A failed send is reported below, with the request it belongs to; this also sees the optional server stream (405 here).
  http.onerror = (error) => {
    if (!closing) logger.debug({ err: error.message, endpoint: endpoint.href }, 'mcp bridge: gateway transport error');
  };
  stdio.onerror = (error) => logger.warn({ err: error.message }, 'mcp bridge: unreadable message on stdin');
  stdio.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === 'initialize') initializeIds.add(message.id);
    http.send(message).catch((error: unknown) => {
      if (closing) return;
      const reason = describe(error, endpoint);
      logger.warn({ endpoint: endpoint.href, reason }, 'mcp bridge: request failed');
      // The client waits for an answer to each request: give it one it can show.
      if (isJSONRPCRequest(message)) void stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: reason } });
    });
  };

  await http.start();
  await stdio.start();
  await new Promise<void>((resolve) => process.stdin.once('end', resolve).once('close', resolve));
  closing = true;
  await stdio.close();
  await http.close();
}

/** Why the gateway did not answer, in words: its own error message when it sent one. */
function describe(error: unknown, endpoint: URL): string {
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0) {
    const body = error.message.replace(/^Error POSTing to endpoint: /, '');
    let said = body;
    try {
      said = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? body;
    } catch {
      // not JSON: the text as it came
    }
    return `Engram at ${endpoint.href} answered ${error.code}: ${said}`;
  }
  const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
  return `Cannot reach Engram at ${endpoint.href}: ${cause}`;
}
