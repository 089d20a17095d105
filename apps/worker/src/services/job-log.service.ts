import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { WorkerHost } from '@nestjs/bullmq';
import type { QueueName } from '@engram/jobs';
import type { Logger } from '@engram/observability';
import { PROCESSORS } from '../processors/index.js';
import { jobRequestId } from '../processors/job-run.js';
import { LOGGER, SERVED_QUEUES } from '../worker.tokens.js';

/** One log line per finished or failed job, for every served queue. */
@Injectable()
export class JobLogService implements OnApplicationBootstrap {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(SERVED_QUEUES) private readonly served: readonly QueueName[],
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    for (const queue of this.served) {
      const { worker } = this.moduleRef.get<WorkerHost>(PROCESSORS[queue], { strict: false });
      worker.on('completed', (job, result: unknown) =>
        this.logger.debug({ queue, job: job.name, jobId: job.id, requestId: jobRequestId(job), result }, 'job completed'),
      );
      worker.on('failed', (job, error) =>
        this.logger.warn(
          {
            queue,
            job: job?.name,
            jobId: job?.id,
            requestId: job ? jobRequestId(job) : undefined,
            attempt: job?.attemptsMade,
            error: error.message,
          },
          'job failed',
        ),
      );
      worker.on('error', (error) => this.logger.error({ queue, error: error.message }, 'worker error'));
    }
  }
}
