import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, workerOptionsFor, type JobOfQueue } from '@engram/jobs';
import { categorizeEntry, type CategorizeOutcome, type MemoryPort } from '@engram/worker-handlers';
import type { Job } from 'bullmq';
import { MEMORY } from '../worker.tokens.js';
import { CATEGORIZE } from './declarations.js';
import { inJobScope, unknownJob } from './job-run.js';

@Processor(CATEGORIZE.queue, workerOptionsFor(CATEGORIZE.queue))
export class CategorizeProcessor extends WorkerHost {
  constructor(@Inject(MEMORY) private readonly memory: MemoryPort) {
    super();
  }

  async process(job: Job): Promise<CategorizeOutcome> {
    const item = { name: job.name, data: job.data } as JobOfQueue<typeof CATEGORIZE.queue>;
    switch (item.name) {
      case JobName.CategorizeEntry:
        return inJobScope(job, item.data.pool, () => categorizeEntry(this.memory, item.data));
      default:
        return unknownJob(item.name, CATEGORIZE.queue);
    }
  }
}
