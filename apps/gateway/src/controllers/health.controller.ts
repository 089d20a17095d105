import { Controller, Get, Header, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MetricsRepository } from '../repositories/metrics.repository.js';
import { AccessService } from '../services/access.service.js';
import { HealthService, type Readiness } from '../services/health.service.js';

@Controller()
export class HealthController {
  constructor(
    @Inject(HealthService) private readonly health: HealthService,
    @Inject(MetricsRepository) private readonly metrics: MetricsRepository,
    @Inject(AccessService) private readonly access: AccessService,
  ) {}

  /** The process is up. */
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Memory and Redis answer and memory takes writes; a 503 names what is missing (requests are still proxied, without memory). */
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<Readiness & { status: string }> {
    const readiness = await this.health.readiness();
    void reply.status(readiness.ready ? 200 : 503);
    const missing = Object.entries(readiness.checks)
      .filter(([, state]) => state === 'down')
      .map(([name]) => name);
    const problems = [
      ...(missing.length > 0 ? [`missing: ${missing.join(', ')}`] : []),
      ...(readiness.checks.memory === 'read-only' ? ['memory read-only: its data disk is full, stores are refused until space is freed'] : []),
    ];
    return { status: readiness.ready ? 'ready' : problems.join('; '), ...readiness };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metricsText(@Req() request: FastifyRequest): Promise<string> {
    const refusal = this.access.metricsRefusal(request.headers);
    if (refusal) throw refusal;
    return this.metrics.registry.metrics();
  }
}
