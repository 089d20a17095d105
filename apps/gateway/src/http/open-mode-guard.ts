import { AllowedHosts, browserRefusal, clientError } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import type { FastifyInstance } from 'fastify';

/**
 * Open mode (no ENGRAM_API_KEYS): before any route, a request whose Host is not this server's (DNS
 * rebinding) or that a web page of another site sends is a 403 naming the setting that changes it
 * (see browserRefusal). Keyed gateways need no such guard: a page cannot present a key it lacks.
 */
export function guardOpenMode(fastify: FastifyInstance, allowedHosts: readonly string[], logger: Logger): void {
  const allowed = new AllowedHosts(allowedHosts);
  fastify.addHook('onRequest', async (request, reply) => {
    const refusal = browserRefusal({ host: request.headers.host, origin: request.headers.origin }, allowed);
    if (!refusal) return;
    logger.warn(
      { requestId: request.id, host: request.headers.host, origin: request.headers.origin },
      refusal.reason === 'host' ? 'open gateway refused a request for another host name' : 'open gateway refused a request from another site',
    );
    const error = clientError(403, refusal.message, refusal.reason === 'host' ? 'host_not_allowed' : 'origin_not_allowed');
    await reply.status(403).header('content-type', 'application/json').send(JSON.stringify(error.body()));
  });
}
