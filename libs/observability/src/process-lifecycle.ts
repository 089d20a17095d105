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

/** For `bootstrap().catch(...)`: one readable line on stderr (just the message for a bad config), exit 1. */
export function exitOnStartFailure(service: string): (error: unknown) => never {
  return (error) => {
    const message = error instanceof ConfigError ? error.message : error instanceof Error ? error.stack : String(error);
    process.stderr.write(`engram ${service} failed to start: ${message}\n`);
    process.exit(1);
  };
}
