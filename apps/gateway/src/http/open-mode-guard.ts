import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { AllowedHosts, ApiKeys, browserRefusal, clientError, type EngramHttpError } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import type { FastifyInstance } from 'fastify';
import { API_KEYS, CONFIG, LOGGER } from '../gateway.tokens.js';

/** How many Host/Origin pairs found allowed are remembered (a client sends the same few on every request). */
const ALLOWED_PAIRS_KEPT = 256;

/**
 * Open mode (no ENGRAM_API_KEYS): before any route, a request whose Host is not this server's (DNS
 * rebinding) or that a web page of another site sends is a 403 naming the setting that changes it
 * (see browserRefusal). Keyed gateways need no such guard: a page cannot present a key it lacks.
 */
@Injectable()
export class OpenModeGuard {
  /** False on a keyed gateway: then nothing is refused here. */
  readonly enabled: boolean;
  private readonly allowed: AllowedHosts;
  /** Host and Origin headers already found allowed: the check parses URLs, and the answer depends on nothing else. */
  private readonly allowedPairs = new Set<string>();

  constructor(
    @Inject(API_KEYS) keys: Pick<ApiKeys, 'open'>,
    @Inject(CONFIG) config: Pick<EngramConfig, 'allowedHosts'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.enabled = keys.open;
    this.allowed = new AllowedHosts(config.allowedHosts);
  }

  /** The 403 to answer (logged), or null when the request may go on. */
  refusal(requestId: string, headers: IncomingHttpHeaders): EngramHttpError | null {
    if (!this.enabled) return null;
    // Neither NUL nor a newline can be in a header value: an absent header and every value stay apart.
    const pair = `${headers.host ?? '\0'}\n${headers.origin ?? '\0'}`;
    if (this.allowedPairs.has(pair)) return null;
    const refusal = browserRefusal({ host: headers.host, origin: headers.origin }, this.allowed);
    if (!refusal) {
      if (this.allowedPairs.size >= ALLOWED_PAIRS_KEPT) this.allowedPairs.clear();
      this.allowedPairs.add(pair);
      return null;
    }
    this.logger.warn(
      { requestId, host: headers.host, origin: headers.origin },
      refusal.reason === 'host' ? 'open gateway refused a request for another host name' : 'open gateway refused a request from another site',
    );
    return clientError(403, refusal.message, refusal.reason === 'host' ? 'host_not_allowed' : 'origin_not_allowed');
  }

  /** Puts the guard in front of every Fastify route. */
  install(fastify: FastifyInstance): void {
    if (!this.enabled) return;
    fastify.addHook('onRequest', async (request, reply) => {
      const error = this.refusal(request.id, request.headers);
      if (error) await reply.status(403).header('content-type', 'application/json').send(JSON.stringify(error.body()));
    });
  }
}
