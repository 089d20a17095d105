import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@engram/observability';
import { LOGGER, SURFACES } from '../gateway.tokens.js';
import type { Surface, Surfaces } from '../services/surface-request.js';
import { TurnService } from '../services/turn.service.js';
import { logAnswered } from './access-log.js';
import { BODY_LIMIT_BYTES } from './body-limit.js';
import { callOver } from './client-call.js';
import { OpenModeGuard } from './open-mode-guard.js';
import { requestIdOf } from './request-id.js';

type SurfaceName = keyof Surfaces;

const SURFACE_OF_PATH: ReadonlyMap<string, SurfaceName> = new Map([
  ['/v1/chat/completions', 'chat'],
  ['/v1/responses', 'responses'],
  ['/v1/messages', 'messages'],
]);
const POOL_PREFIX = '/pools/';
/** Fastify's router (find-my-way's maxParamLength) answers a longer path parameter with a 414. */
const MAX_POOL_SEGMENT = 100;
/** The JSON every SDK sends; another content type, even one Fastify takes, goes through Fastify. */
const JSON_CONTENT_TYPE = /^application\/json(?:; ?charset=utf-8)?$/i;
const DECIMAL = /^\d+$/;
/** What Fastify's reply makes of the guard's `content-type: application/json` for a text body. */
const GUARD_CONTENT_TYPE = 'application/json; charset=utf-8';

interface ModelRoute {
  readonly surface: SurfaceName;
  readonly pool: string | undefined;
  /** The route's pattern, for the access log (as Fastify names it). */
  readonly pattern: string;
}

/**
 * The three model routes (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`, at the root
 * or under `/pools/:pool`), served from Node's HTTP server before Fastify and Nest see them. Every
 * model request went through Fastify's routing and hooks and Nest's router only to be hijacked by a
 * controller that hands it to TurnService: about 15 of the gateway's 120 µs of CPU per request,
 * measured side by side (#21). Here the request gets what it got there and nothing else: its
 * request id, the open-mode guard, its body read whole, TurnService, the access log line.
 *
 * Only requests this can serve exactly as Fastify would are taken: a POST to one of those paths
 * in origin form, without percent-encoding (the router would decode it), with a JSON content type
 * and a Content-Length within the body limit, while the server is not shutting down. Everything
 * else (chunked bodies, other content types, bodies over the limit, requests during shutdown,
 * every other route) goes to Fastify, whose controllers for the same routes still exist.
 */
@Injectable()
export class ModelRoutes {
  private closing = false;

  constructor(
    @Inject(TurnService) private readonly turns: TurnService,
    @Inject(SURFACES) private readonly surfaces: Surfaces,
    @Inject(OpenModeGuard) private readonly guard: OpenModeGuard,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** From the start of the shutdown every request goes to Fastify, which answers it 503 as it answers its own. */
  close(): void {
    this.closing = true;
  }

  /** Serves the request and returns true when it is one of the model routes' requests it takes; false leaves it to Fastify. */
  serve(request: IncomingMessage, response: ServerResponse): boolean {
    if (this.closing || request.method !== 'POST') return false;
    const route = modelRoute(request.url);
    if (route === null || !plainJsonBody(request.headers)) return false;
    const started = performance.now();
    const id = requestIdOf(request);
    let logged = false;
    const answered = (): void => {
      if (logged) return;
      logged = true;
      logAnswered(this.logger, {
        requestId: id,
        method: request.method,
        url: request.url ?? '',
        route: route.pattern,
        status: response.statusCode,
        ms: performance.now() - started,
      });
    };
    response.on('finish', answered);
    response.on('error', answered);
    const refusal = this.guard.refusal(id, request.headers);
    if (refusal) {
      const body = JSON.stringify(refusal.body());
      response.writeHead(403, { 'x-request-id': id, 'content-type': GUARD_CONTENT_TYPE, 'content-length': String(Buffer.byteLength(body)) });
      response.end(body);
      return true;
    }
    const surface = this.surfaces[route.surface] as Surface<unknown>;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      this.turns.handle(surface, callOver(request, response, id, body), route.pool).catch((error: unknown) => {
        // As Nest's error filter does for a controller whose reply was hijacked: log it, cut the connection.
        this.logger.error({ err: error instanceof Error ? error.stack : String(error) }, 'request failed');
        response.destroy();
      });
    });
    return true;
  }
}

/** The model route `url` names, or null when it names none or Fastify's router would read it differently. */
function modelRoute(url: string | undefined): ModelRoute | null {
  if (url === undefined || url.charCodeAt(0) !== 0x2f) return null;
  let end = url.length;
  const query = url.indexOf('?');
  if (query !== -1) end = query;
  const hash = url.indexOf('#');
  if (hash !== -1 && hash < end) end = hash;
  const path = end === url.length ? url : url.slice(0, end);
  if (path.includes('%')) return null;
  const surface = SURFACE_OF_PATH.get(path);
  if (surface) return { surface, pool: undefined, pattern: path };
  if (!path.startsWith(POOL_PREFIX)) return null;
  const slash = path.indexOf('/', POOL_PREFIX.length);
  if (slash === -1 || slash === POOL_PREFIX.length || slash - POOL_PREFIX.length > MAX_POOL_SEGMENT) return null;
  const rest = path.slice(slash);
  const pooled = SURFACE_OF_PATH.get(rest);
  return pooled ? { surface: pooled, pool: path.slice(POOL_PREFIX.length, slash), pattern: `/pools/:pool${rest}` } : null;
}

/** A JSON body whose length is announced and within the limit (what every SDK sends). */
function plainJsonBody(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  const length = headers['content-length'];
  return (
    type !== undefined &&
    JSON_CONTENT_TYPE.test(type) &&
    length !== undefined &&
    DECIMAL.test(length) &&
    Number(length) <= BODY_LIMIT_BYTES &&
    headers['transfer-encoding'] === undefined
  );
}
