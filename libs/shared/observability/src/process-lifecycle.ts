import { ConfigError } from '@engram/config';
import type { Logger } from 'pino';

/**
 * Stops the service once on SIGTERM or SIGINT: logs, runs `stop`, exits 0. When `stop` hangs
 * past the grace period (Redis gone while closing, say), exits 1 instead of waiting forever.
 */
export function stopOnSignals(logger: Logger, stop: () => Promise<void>, graceMs = 10_000): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    setTimeout(() => {
      logger.warn({ afterMs: graceMs }, 'did not stop in time; exiting');
      process.exit(1);
    }, graceMs).unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error instanceof Error ? error.stack : String(error) }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handle);
  process.once('SIGINT', handle);
}

/**
 * For `bootstrap().catch(...)`: one JSON line on stderr (just the message for a bad config, the
 * stack inside the line otherwise), exit 1. Every line a service writes is JSON, this one too.
 */
export function exitOnStartFailure(service: string): (error: unknown) => never {
  return (error) => {
    const line = {
      level: 'fatal',
      time: new Date().toISOString(),
      service,
      msg: `engram ${service} failed to start: ${error instanceof Error ? error.message : String(error)}`,
      ...(error instanceof Error && !(error instanceof ConfigError) ? { err: error.stack } : {}),
    };
    process.stderr.write(`${JSON.stringify(line)}\n`);
    process.exit(1);
  };
}

/**
 * Logs what no code caught as one JSON line, instead of Node's multi-line stack on stderr. The
 * gateway keeps serving (a bug on one request must not take the others down); a service that
 * owns state or jobs exits 1 after the line and is restarted (compose, npm start).
 */
export function logUncaughtErrors(logger: Logger, after: 'keep-running' | 'exit'): void {
  const report = (kind: string) => (error: unknown) => {
    logger.error({ err: error instanceof Error ? error.stack : String(error) }, kind);
    if (after === 'exit') process.exit(1);
  };
  process.on('unhandledRejection', report('unhandled rejection'));
  process.on('uncaughtException', report('uncaught exception'));
}
