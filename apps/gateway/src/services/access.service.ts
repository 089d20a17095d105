import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { type ApiKeys, clientError, MetricsAccess, presentedKey, selectPool, type EngramHttpError, type PoolGrant } from '@engram/gateway-engine';
import { API_KEYS, CONFIG } from '../gateway.tokens.js';

export type AccessDecision = { readonly pool: string; readonly error?: undefined } | { readonly pool?: undefined; readonly error: EngramHttpError };

/** Who may call, and which pool a request works on (docs/DESIGN.md, "Pools"), for every surface. */
@Injectable()
export class AccessService {
  private readonly metrics: MetricsAccess;

  constructor(
    @Inject(API_KEYS) private readonly keys: ApiKeys,
    @Inject(CONFIG) config: Partial<Pick<EngramConfig, 'metricsToken'>> = {},
  ) {
    this.metrics = new MetricsAccess(keys, config.metricsToken);
  }

  /** `/metrics`: an Engram key or METRICS_TOKEN (open only in open mode without METRICS_TOKEN); null when allowed. */
  metricsRefusal(headers: IncomingHttpHeaders): EngramHttpError | null {
    if (this.metrics.allows(presentedKey(header(headers, 'authorization'), header(headers, 'x-api-key')))) return null;
    return clientError(401, 'metrics need an Engram API key or METRICS_TOKEN (Authorization: Bearer <token>)', 'invalid_api_key');
  }

  resolve(headers: IncomingHttpHeaders, pathPool: string | undefined): AccessDecision {
    const grant = this.grant(headers);
    if ('error' in grant) return grant;
    return selectPool({ pathPool, headerPool: header(headers, 'x-engram-pool') }, grant);
  }

  /** The pools the presented key reaches (all of them in open mode), or a 401. */
  grant(headers: IncomingHttpHeaders): PoolGrant | { readonly error: EngramHttpError } {
    const grant = this.keys.authenticate(presentedKey(header(headers, 'authorization'), header(headers, 'x-api-key')));
    if (grant === null) return { error: clientError(401, 'a valid Engram API key is required (Authorization: Bearer <key>)', 'invalid_api_key') };
    return grant;
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
