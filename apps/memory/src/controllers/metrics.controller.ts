import { Controller, Get, Header, Inject } from '@nestjs/common';
import { METRICS } from '../memory.tokens.js';
import type { MetricsRepository } from '../repositories/metrics.repository.js';

@Controller()
export class MetricsController {
  constructor(@Inject(METRICS) private readonly metrics: MetricsRepository) {}

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  render(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
