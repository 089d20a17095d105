import type { Logger } from '@engram/observability';

/** Probes polled every few seconds: their access lines would drown the rest at info. */
const QUIET_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export interface AnsweredRequest {
  readonly requestId: string;
  readonly method: string | undefined;
  /** As the client sent it; only its path is logged. */
  readonly url: string;
  /** The route's pattern, e.g. `/pools/:pool/v1/chat/completions`. */
  readonly route: string | undefined;
  readonly status: number;
  readonly ms: number;
}

/** One access line per answered request, whichever server code answered it. */
export function logAnswered(logger: Logger, answered: AnsweredRequest): void {
  // The path only: a query string holds what a person searched for (`?q=`), which must not outlive a purge in the logs.
  const path = answered.url.split('?', 1)[0]!;
  const level = QUIET_PATHS.has(path) ? 'debug' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  logger[level](
    {
      requestId: answered.requestId,
      method: answered.method,
      path,
      route: answered.route,
      status: answered.status,
      ms: Math.round(answered.ms * 10) / 10,
    },
    'request',
  );
}
