import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, workerOptionsFor, type JobOfQueue } from '@engram/jobs';
import { decaySweep, type Clock, type DecayOutcome, type MemoryPort } from '@engram/worker-handlers';
import type { Job } from 'bullmq';
import { CLOCK, MEMORY } from '../worker.tokens.js';
import { DECAY } from './declarations.js';
import { inJobScope, jobContext, unknownJob } from './job-run.js';

@Processor(DECAY.queue, workerOptionsFor(DECAY.queue))
export class DecayProcessor extends WorkerHost {
  constructor(
    @Inject(MEMORY) private readonly memory: MemoryPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    super();
  }

  async process(job: Job): Promise<DecayOutcome> {
    const item = { name: job.name, data: job.data } as JobOfQueue<typeof DECAY.queue>;
    switch (item.name) {
      case JobName.DecaySweep:
        return inJobScope(job, item.data.pool, () => decaySweep(this.memory, this.clock, item.data, jobContext(job)));
      default:
        return unknownJob(item.name, DECAY.queue);
    }
  }
}
