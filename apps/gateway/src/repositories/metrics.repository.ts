import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ErrorKind = 'upstream' | 'upstream_status' | 'client_abort' | 'internal' | 'bad_request' | 'auth' | 'memory_unavailable';

/** Prometheus metrics of the gateway, served on GET /metrics. */
@Injectable()
export class MetricsRepository {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'engram_gateway_requests_total',
    help: 'Requests answered, by route and status code.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly upstreamLatency = new Histogram({
    name: 'engram_gateway_upstream_latency_seconds',
    help: 'Time from sending a request upstream to its response headers.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly memoryRounds = new Counter({
    name: 'engram_gateway_memory_tool_rounds_total',
    help: 'Memory tool rounds executed by the gateway (one round = the memory calls of one model turn).',
    registers: [this.registry],
  });
  private readonly tier1Chars = new Counter({
    name: 'engram_gateway_tier1_chars_injected_total',
    help: 'Characters of Tier 1 memory injected into system prompts.',
    registers: [this.registry],
  });
  private readonly errors = new Counter({
    name: 'engram_gateway_errors_total',
    help: 'Errors by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  request(route: string, status: number): void {
    this.requests.inc({ route, status: String(status) });
  }
  upstreamSeconds(seconds: number): void {
    this.upstreamLatency.observe(seconds);
  }
  memoryRound(): void {
    this.memoryRounds.inc();
  }
  tier1Injected(chars: number): void {
    this.tier1Chars.inc(chars);
  }
  error(kind: ErrorKind): void {
    this.errors.inc({ kind });
  }
}
