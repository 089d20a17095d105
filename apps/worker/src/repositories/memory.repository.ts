import type { EngramConfig } from '@engram/config';
import { InternalTokenSource, MemoryClient, MemoryPattern } from '@engram/contracts';
import type { MemoryPort } from '@engram/worker-handlers';
import { logReplicaChange, requestContext, type Logger } from '@engram/observability';

/** A consolidation, or a decay sweep of a large pool, writes many events in one call: a longer deadline than a read. */
const LONG_WRITE_TIMEOUT_MS = 30_000;
const LONG_WRITES: ReadonlySet<string> = new Set([MemoryPattern.Consolidate, MemoryPattern.DecaySweep]);

/** The worker's only way to memory: the contracts' client over Nest TCP, to the replicas of MEMORY_HOSTS. */
export function createMemoryClient(config: EngramConfig, logger: Logger): MemoryClient {
  return MemoryClient.connect({
    replicas: config.memory.replicas,
    timeoutMs: config.memory.rpcTimeoutMs,
    token: new InternalTokenSource(config.internalToken, config.dataDir, config.encryptionKey),
    onReplicaChange: logReplicaChange(logger),
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
