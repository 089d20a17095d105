import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, workerOptionsFor, type JobOfQueue } from '@engram/jobs';
import { extractExchange, type ExtractOutcome, type MemoryPort } from '@engram/worker-handlers';
import type { Job } from 'bullmq';
import { MEMORY } from '../worker.tokens.js';
import { EXTRACT } from './declarations.js';
import { inJobScope, jobContext, unknownJob } from './job-run.js';

@Processor(EXTRACT.queue, workerOptionsFor(EXTRACT.queue))
export class ExtractProcessor extends WorkerHost {
  constructor(@Inject(MEMORY) private readonly memory: MemoryPort) {
    super();
  }

  async process(job: Job): Promise<ExtractOutcome> {
    const item = { name: job.name, data: job.data } as JobOfQueue<typeof EXTRACT.queue>;
    switch (item.name) {
      case JobName.ExtractExchange: {
        const outcome = await inJobScope(job, item.data.pool, () => extractExchange(this.memory, item.data, jobContext(job)));
        // The exchange is needed only until it is extracted: a finished job kept for a day must not
        // hold the conversation's text (a purge could miss what extraction reworded).
        await job.updateData({ ...item.data, suggestions: [], exchange: { user: '', assistant: '' } }).catch(() => undefined);
        return outcome;
      }
      default:
        return unknownJob(item.name, EXTRACT.queue);
    }
  }
}
