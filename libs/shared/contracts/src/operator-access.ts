import { isInternalToken } from './internal-token.js';

/**
 * Who may read the operator endpoints of memory's and the worker's HTTP ports (memory's `/metrics`,
 * the worker's `/queues`): a caller presenting, as a bearer, the internal token or METRICS_TOKEN
 * (a Prometheus scraper). Never open: these ports hold no Engram keys, and anything on the network
 * that reaches them (another container, a local process) must not read or retry jobs unasked.
 */
export function operatorMayRead(
  authorization: string | undefined,
  credentials: { internalToken: string | undefined; metricsToken: string | undefined },
): boolean {
  const presented = bearer(authorization);
  if (presented === undefined) return false;
  return [credentials.internalToken, credentials.metricsToken].some(
    (secret) => secret !== undefined && secret !== '' && isInternalToken(presented, secret),
  );
}

function bearer(authorization: string | undefined): string | undefined {
  const match = /^bearer\s+(.+)$/i.exec(authorization?.trim() ?? '');
  return match?.[1]?.trim() || undefined;
}

/** The OpenAI-shaped body of a refusal on those endpoints. */
export const OPERATOR_ACCESS_REFUSED = {
  error: {
    message:
      "this endpoint needs the internal token (ENGRAM_INTERNAL_TOKEN or the data dir's internal-token) or METRICS_TOKEN (Authorization: Bearer <token>)",
    type: 'authentication_error',
    code: 'invalid_api_key',
  },
} as const;
