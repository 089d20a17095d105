import type { EngramConfig } from '@engram/config';
import { MemoryClient, MemoryPattern } from '@engram/contracts';
import type { MemoryPort } from '@engram/maintenance';
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

export function memoryPort(client: MemoryClient): MemoryPort {
  return {
    call: (pattern, request) =>
      client.call(pattern, request, pattern === MemoryPattern.Consolidate ? CONSOLIDATE_TIMEOUT_MS : undefined),
  };
}
