import { HttpException, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { OPERATOR_ACCESS_REFUSED, operatorMayRead, readInternalToken } from '@engram/contracts';
import type { Logger } from '@engram/observability';
import type { FastifyRequest } from 'fastify';
import { CONFIG, LOGGER } from '../worker.tokens.js';

/** `/queues` (counts, retry): the internal token or METRICS_TOKEN as a bearer (healthz and readyz stay open). */
@Injectable()
export class OperatorAccessGuard implements CanActivate {
  constructor(
    @Inject(CONFIG) private readonly config: EngramConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // The data dir's token is read on each request: memory writes it on its first start, maybe after ours.
    const internalToken = this.config.internalToken ?? readInternalToken(this.config.dataDir, this.config.encryptionKey);
    if (operatorMayRead(request.headers.authorization, { internalToken, metricsToken: this.config.metricsToken })) return true;
    this.logger.warn(
      { path: request.url.split('?', 1)[0], remote: request.ip },
      'worker operator request refused: no valid internal token or METRICS_TOKEN',
    );
    throw new HttpException(OPERATOR_ACCESS_REFUSED, 401);
  }
}
