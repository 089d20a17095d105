import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { TcpContext } from '@nestjs/microservices';
import { INTERNAL_TOKEN_METADATA_KEY, isInternalToken, MemoryError } from '@engram/contracts';
import type { Logger } from '@engram/observability';
import { INTERNAL_TOKEN, LOGGER } from '../memory.tokens.js';

/**
 * The RPC port answers only callers that present the internal token (ENGRAM_INTERNAL_TOKEN, or
 * the data dir's): anyone else who can reach the port (a local process, another container on
 * the compose network) is refused and logged, before any handler runs.
 */
@Injectable()
export class InternalTokenGuard implements CanActivate {
  constructor(
    @Inject(INTERNAL_TOKEN) private readonly token: string,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const rpc = context.switchToRpc().getContext<TcpContext>();
    const presented = rpc.getMetadata()?.[INTERNAL_TOKEN_METADATA_KEY];
    if (isInternalToken(presented, this.token)) return true;
    const socket = rpc.getSocketRef().netSocket;
    this.logger.warn(
      { pattern: rpc.getPattern(), remote: `${socket.remoteAddress}:${socket.remotePort}`, token: presented === undefined ? 'missing' : 'wrong' },
      'memory call refused: no valid internal token',
    );
    throw new MemoryError('unauthorized', "memory calls need the internal token (ENGRAM_INTERNAL_TOKEN or the data dir's internal-token)");
  }
}
