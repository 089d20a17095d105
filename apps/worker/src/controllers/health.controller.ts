import { Controller, Get, HttpCode, Inject, NotFoundException, Param, Post, Res, UseGuards } from '@nestjs/common';
import type { MemoryClient } from '@engram/contracts';
import type { QueueName } from '@engram/jobs';
import { pingRedis } from '@engram/observability';
import type { Queue } from 'bullmq';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { MEMORY_CLIENT, QUEUES, REDIS } from '../worker.tokens.js';
import { OperatorAccessGuard } from './operator-access.guard.js';

const CHECK_TIMEOUT_MS = 1_000;

/** Health for compose and operators, and the operator's view of the queues (failed jobs can be retried; internal token or METRICS_TOKEN). */
@Controller()
export class HealthController {
  constructor(
    @Inject(QUEUES) private readonly queues: ReadonlyMap<QueueName, Queue>,
    @Inject(MEMORY_CLIENT) private readonly memory: MemoryClient,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  @Get('healthz')
  @HttpCode(200)
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready when Redis (the queues) and at least one memory replica answer and take writes; each replica's
   * state is named. While memory's data disk is full (`read-only`) every job that stores, updates or
   * decays fails its attempt.
   */
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<object> {
    const [redisStatus, replicas] = await Promise.all([pingRedis(this.redis, CHECK_TIMEOUT_MS), this.memory.readiness(CHECK_TIMEOUT_MS)]);
    const up = replicas.find((replica) => replica.ping === 'up');
    const readOnly = replicas.find((replica) => replica.ping === 'read-only');
    const memory = up
      ? { status: 'up' as const, lastSeq: up.lastSeq }
      : readOnly
        ? { status: 'read-only' as const, lastSeq: readOnly.lastSeq, ...readOnly.diskFull }
        : { status: 'down' as const, error: replicas.map((replica) => replica.error ?? 'no answer').join('; ') };
    const ready = redisStatus === 'up' && memory.status === 'up';
    void reply.status(ready ? 200 : 503);
    const status = ready
      ? 'ready'
      : redisStatus === 'up' && memory.status === 'read-only'
        ? 'memory read-only: its data disk is full, jobs that write fail until space is freed'
        : 'down';
    return {
      status,
      checks: { redis: { status: redisStatus }, memory },
      memoryReplicas: replicas.map(({ address, ping, since, error, lastSeq }) => ({
        address,
        state: ping,
        since,
        ...(ping === 'down' && error !== null ? { error } : {}),
        lastSeq,
      })),
    };
  }

  /** Job counts per served queue, failed included. */
  @Get('queues')
  @UseGuards(OperatorAccessGuard)
  async counts(): Promise<Record<string, Record<string, number>>> {
    const entries = await Promise.all(
      [...this.queues].map(async ([name, queue]) => [
        name,
        await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'),
      ]),
    );
    return Object.fromEntries(entries) as Record<string, Record<string, number>>;
  }

  /** Moves every failed job of a queue back to waiting, for another round of attempts. */
  @Post('queues/:queue/retry-failed')
  @UseGuards(OperatorAccessGuard)
  @HttpCode(200)
  async retryFailed(@Param('queue') name: string): Promise<{ queue: string; retried: number }> {
    const queue = this.queues.get(name as QueueName);
    if (!queue) throw new NotFoundException(`this worker does not serve queue ${name}`);
    const retried = await queue.getJobCountByTypes('failed');
    await queue.retryJobs({ state: 'failed' });
    return { queue: name, retried };
  }
}
