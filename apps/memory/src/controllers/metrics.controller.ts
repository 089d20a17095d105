import { Controller, Get, Header, Inject, UseGuards } from '@nestjs/common';
import { METRICS } from '../memory.tokens.js';
import type { MetricsRepository } from '../repositories/metrics.repository.js';
import { OperatorAccessGuard } from './operator-access.guard.js';

/** Prometheus text, for the internal token or METRICS_TOKEN only. */
@Controller()
@UseGuards(OperatorAccessGuard)
export class MetricsController {
  constructor(@Inject(METRICS) private readonly metrics: MetricsRepository) {}

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  render(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
