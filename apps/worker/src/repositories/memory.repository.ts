import type { EngramConfig } from '@engram/config';
import { MemoryClient, MemoryPattern } from '@engram/contracts';
import type { MemoryPort } from '@engram/maintenance';
import { requestContext } from '@engram/observability';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';

/** A consolidation writes many events (each fsynced) in one call; it gets a longer deadline than a read. */
const CONSOLIDATE_TIMEOUT_MS = 30_000;

/** The worker's only way to memory: the contracts' client over Nest TCP. */
export function createMemoryClient(config: EngramConfig): MemoryClient {
  const proxy = ClientProxyFactory.create({
    transport: Transport.TCP,
    options: { host: config.memory.host, port: config.memory.port },
  });
  return new MemoryClient(proxy, config.memory.rpcTimeoutMs);
}

/** Every call carries the job's request id (see inJobScope), so memory's log lines name it too. */
export function memoryPort(client: MemoryClient): MemoryPort {
  return {
    call: (pattern, request) => {
      const requestId = requestContext.getStore()?.requestId;
      const withId = requestId && typeof request === 'object' ? { requestId, ...request } : request;
      return client.call(pattern, withId, pattern === MemoryPattern.Consolidate ? CONSOLIDATE_TIMEOUT_MS : undefined);
    },
  };
}
