import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/** Request-scoped context carried through async calls, so every log line names its request. */
export interface RequestContext {
  readonly requestId: string;
  readonly pool?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

/** Structured JSON logs on stdout, one logger per service; `requestId` is added from the async context. */
export function createLogger(service: string, level: LoggerOptions['level'] = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin() {
      const context = requestContext.getStore();
      return context ? { requestId: context.requestId, ...(context.pool ? { pool: context.pool } : {}) } : {};
    },
  });
}
