import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { MemoryClient } from '@engram/contracts';
import { JobName, workerOptionsFor, type JobOfQueue } from '@engram/jobs';
import { embedPool, type EmbedderPort, type EmbedPoolOutcome } from '@engram/worker-handlers';
import { UnrecoverableError, type Job } from 'bullmq';
import { EMBEDDER, MEMORY_CLIENT } from '../worker.tokens.js';
import { EMBED } from './declarations.js';
import { inJobScope, unknownJob } from './job-run.js';

@Processor(EMBED.queue, workerOptionsFor(EMBED.queue))
export class EmbedProcessor extends WorkerHost {
  constructor(
    @Inject(MEMORY_CLIENT) private readonly memory: MemoryClient,
    @Inject(EMBEDDER) private readonly embedder: EmbedderPort | null,
  ) {
    super();
  }

  async process(job: Job): Promise<EmbedPoolOutcome> {
    const item = { name: job.name, data: job.data } as JobOfQueue<typeof EMBED.queue>;
    switch (item.name) {
      case JobName.EmbedPool: {
        const embedder = this.embedder;
        if (!embedder)
          throw new UnrecoverableError('neither EMBEDDINGS_BASE_URL nor EMBEDDINGS_MODEL_DIR is set on this worker; set it as on the memory service');
        return inJobScope(job, item.data.pool, () => embedPool(this.memory, embedder, item.data));
      }
      default:
        return unknownJob(item.name, EMBED.queue);
    }
  }
}
