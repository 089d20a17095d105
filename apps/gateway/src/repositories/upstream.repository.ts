import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { upstreamError, type ClientSignal, type UpstreamPort, type UpstreamReply } from '@engram/gateway-engine';

export interface UpstreamOptions {
  /** e.g. https://api.openai.com/v1 (no trailing slash). */
  readonly baseUrl: string;
  /** Replaces the client's credentials when set. */
  readonly apiKey: string | undefined;
  /**
   * Whether a client's own key may travel upstream when `apiKey` is unset. False in keyed mode:
   * there the client's key is an Engram key, which no provider should ever see.
   */
  readonly forwardClientKey: boolean;
  /** How credentials travel: OpenAI's bearer, or Anthropic's x-api-key. */
  readonly auth: 'bearer' | 'x-api-key';
  readonly timeoutMs: number;
  readonly connections?: number;
}

type Forward = (method: string, path: string, body: Uint8Array | null, signal: ClientSignal) => Promise<UpstreamReply>;

/** Client headers that never travel upstream: hop-by-hop, length, Engram's own, and the client's credentials. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'accept-encoding',
  'authorization',
  'x-api-key',
  'x-engram-pool',
  'x-engram-memory',
  'expect',
]);

/**
 * The upstream LLM over one keep-alive undici Pool: bodies stream both ways, a client's
 * disconnect aborts the upstream request, and silence past UPSTREAM_TIMEOUT_MS (before the
 * headers or between body chunks) becomes a 504. Network failures become 502s.
 */
export class UpstreamRepository {
  private readonly pool: Pool;
  private readonly basePath: string;

  constructor(private readonly options: UpstreamOptions) {
    const url = new URL(options.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 256,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connectTimeout: Math.min(options.timeoutMs, 10_000),
    });
  }

  /**
   * An UpstreamPort carrying this client's headers (and credentials, unless UPSTREAM_API_KEY
   * replaces them); `forward` sends any other request as the client made it (its content type too).
   */
  forClient(clientHeaders: IncomingHttpHeaders, requestId: string): UpstreamPort & { forward: Forward } {
    const headers = this.headersFor(clientHeaders, requestId);
    return {
      post: (path, body, signal) => this.send('POST', path, { ...headers, 'content-type': 'application/json' }, body, signal),
      forward: (method, path, body, signal) => this.send(method, path, headers, body, signal),
    };
  }

  /** After the HTTP server has answered its last request (Nest's shutdown). */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private headersFor(client: IncomingHttpHeaders, requestId: string): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const name in client) {
      const value = client[name];
      if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    headers['accept-encoding'] = 'identity';
    headers['x-request-id'] = requestId;
    const key = this.options.apiKey ?? (this.options.forwardClientKey ? clientKey(client) : undefined);
    if (key !== undefined) {
      // A client's own bearer travels as a bearer on every surface: for Anthropic that is an OAuth
      // token (Claude Code's ANTHROPIC_AUTH_TOKEN), which the API does not take as x-api-key.
      const clientBearer = this.options.apiKey === undefined && /^bearer\s+/i.test(String(client['authorization'] ?? ''));
      if (this.options.auth === 'bearer' || clientBearer) headers['authorization'] = `Bearer ${key}`;
      else headers['x-api-key'] = key;
    }
    return headers;
  }

  private async send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | Uint8Array | null,
    signal: ClientSignal,
  ): Promise<UpstreamReply> {
    return this.pool.request({ method, path: this.basePath + path, headers, body, signal }).then(
      (response) => new UpstreamResponse(response),
      (error: unknown) => {
        throw toUpstreamError(error, signal);
      },
    );
  }
}

function clientKey(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers['authorization'];
  if (typeof authorization === 'string' && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, '');
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' ? apiKey : undefined;
}

/** Upstream response headers a client may use (content type and disposition, rate limits, provider ids); no hop-by-hop, no lengths. */
function forwardedResponseHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (
      name === 'content-type' ||
      name === 'content-disposition' ||
      name === 'retry-after' ||
      name.startsWith('x-ratelimit-') ||
      name.startsWith('openai-') ||
      name.startsWith('anthropic-')
    ) {
      kept[name] = text;
    } else if (name === 'x-request-id' || name === 'request-id') {
      kept['x-upstream-request-id'] = text;
    }
  }
  return kept;
}

/** An undici response as the engine reads it, failures of its body mapped like those of the request. */
class UpstreamResponse implements UpstreamReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(private readonly response: Dispatcher.ResponseData) {
    this.status = response.statusCode;
    this.headers = forwardedResponseHeaders(response.headers);
  }

  get body(): AsyncIterable<Uint8Array> {
    return mapBodyErrors(this.response.body);
  }

  bytes(): Promise<Uint8Array> {
    return this.response.body.bytes().catch((error: unknown) => {
      throw toUpstreamError(error, null);
    });
  }
}

async function* mapBodyErrors(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk;
  } catch (error) {
    throw toUpstreamError(error, null);
  }
}

function toUpstreamError(error: unknown, signal: ClientSignal | null): unknown {
  if (signal?.aborted) return error;
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return upstreamError(504, 'the upstream did not answer in time');
  }
  if ((error as { name?: string }).name === 'AbortError') return error;
  const message = error instanceof Error ? error.message : String(error);
  return upstreamError(502, `the upstream could not be reached: ${message}`);
}
