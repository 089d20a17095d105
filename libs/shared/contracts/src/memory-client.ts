import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom, timeout, TimeoutError } from 'rxjs';
import { INTERNAL_TOKEN_METADATA_KEY, type InternalTokenSource } from './internal-token.js';
import { MemoryError } from './memory-error.js';
import type { MemoryContract } from './memory-messages.js';

/**
 * The only way other processes reach memory: a typed call per pattern, with a deadline.
 * Service errors arrive as MemoryError with the service's code; silence past the deadline,
 * or a refused connection, as MemoryError('unavailable').
 */
export class MemoryClient {
  constructor(
    private readonly proxy: ClientProxy,
    private readonly defaultTimeoutMs: number,
    private readonly token?: InternalTokenSource,
  ) {
    // Every packet carries the channel's token in its metadata, never in the payload.
    proxy.setOnDispatchHook((packet) => {
      const current = token?.current();
      if (current) packet.metadata = { ...packet.metadata, [INTERNAL_TOKEN_METADATA_KEY]: current };
    });
  }

  /** A client over Nest TCP to memory at host:port, presenting the token on every call. */
  static connect(options: {
    readonly host: string;
    readonly port: number;
    readonly timeoutMs: number;
    readonly token: InternalTokenSource;
  }): MemoryClient {
    const proxy = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: options.host, port: options.port } });
    return new MemoryClient(proxy, options.timeoutMs, options.token);
  }

  async call<P extends keyof MemoryContract>(
    pattern: P,
    request: MemoryContract[P][0],
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<MemoryContract[P][1]> {
    try {
      return await firstValueFrom(this.proxy.send<MemoryContract[P][1]>(pattern, request).pipe(timeout(timeoutMs)));
    } catch (error) {
      const failure = toMemoryError(error, pattern, timeoutMs);
      if (failure.code === 'unauthorized') this.token?.refused();
      throw failure;
    }
  }

  close(): Promise<void> | void {
    return this.proxy.close() as Promise<void> | void;
  }
}

function toMemoryError(error: unknown, pattern: string, timeoutMs: number): MemoryError {
  if (error instanceof MemoryError) return error;
  if (error instanceof TimeoutError) {
    return new MemoryError('unavailable', `memory service did not answer ${pattern} within ${timeoutMs} ms`);
  }
  if (MemoryError.isBody(error)) return new MemoryError(error.code, error.message);
  const message = error instanceof Error ? error.message : JSON.stringify(error);
  const refused = /ECONNREFUSED|ECONNRESET|EPIPE|closed/i.test(message);
  return new MemoryError(refused ? 'unavailable' : 'internal', `memory service ${pattern}: ${message}`);
}
