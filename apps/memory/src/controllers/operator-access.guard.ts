import { HttpException, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { OPERATOR_ACCESS_REFUSED, operatorMayRead } from '@engram/contracts';
import type { Logger } from '@engram/observability';
import type { FastifyRequest } from 'fastify';
import { CONFIG, INTERNAL_TOKEN, LOGGER } from '../memory.tokens.js';

/** `/metrics` on the health port: the internal token or METRICS_TOKEN as a bearer (healthz and readyz stay open). */
@Injectable()
export class OperatorAccessGuard implements CanActivate {
  constructor(
    @Inject(INTERNAL_TOKEN) private readonly internalToken: string,
    @Inject(CONFIG) private readonly config: EngramConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (operatorMayRead(request.headers.authorization, { internalToken: this.internalToken, metricsToken: this.config.metricsToken })) return true;
    this.logger.warn({ path: request.url.split('?', 1)[0], remote: request.ip }, 'memory operator request refused: no valid internal token or METRICS_TOKEN');
    throw new HttpException(OPERATOR_ACCESS_REFUSED, 401);
  }
}
