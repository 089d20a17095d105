import type { EngramConfig } from '@engram/config';
import { InternalTokenSource, MemoryClient, MemoryPattern } from '@engram/contracts';
import type { MemoryPort } from '@engram/worker-handlers';
import { requestContext } from '@engram/observability';

/** A consolidation, or a decay sweep of a large pool, writes many events in one call: a longer deadline than a read. */
const LONG_WRITE_TIMEOUT_MS = 30_000;
const LONG_WRITES: ReadonlySet<string> = new Set([MemoryPattern.Consolidate, MemoryPattern.DecaySweep]);

/** The worker's only way to memory: the contracts' client over Nest TCP. */
export function createMemoryClient(config: EngramConfig): MemoryClient {
  return MemoryClient.connect({
    host: config.memory.host,
    port: config.memory.port,
    timeoutMs: config.memory.rpcTimeoutMs,
    token: new InternalTokenSource(config.internalToken, config.dataDir, config.encryptionKey),
  });
}

/** Every call carries the job's request id (see inJobScope), so memory's log lines name it too. */
export function memoryPort(client: MemoryClient): MemoryPort {
  return {
    call: (pattern, request) => {
      const requestId = requestContext.getStore()?.requestId;
      const withId = requestId && typeof request === 'object' ? { requestId, ...request } : request;
      return client.call(pattern, withId, LONG_WRITES.has(pattern) ? LONG_WRITE_TIMEOUT_MS : undefined);
    },
  };
}
