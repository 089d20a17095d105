import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { EngramConfig } from '@engram/config';
import { JobName, workerOptionsFor, type JobOfQueue } from '@engram/jobs';
import { consolidatePool, type ConsolidateOutcome, type LlmPort, type MemoryPort } from '@engram/worker-handlers';
import type { Logger } from '@engram/observability';
import type { Job } from 'bullmq';
import { CONFIG, LLM, LOGGER, MEMORY } from '../worker.tokens.js';
import { CONSOLIDATE } from './declarations.js';
import { inJobScope, unknownJob } from './job-run.js';

@Processor(CONSOLIDATE.queue, workerOptionsFor(CONSOLIDATE.queue))
export class ConsolidateProcessor extends WorkerHost {
  constructor(
    @Inject(MEMORY) private readonly memory: MemoryPort,
    @Inject(LLM) private readonly llm: LlmPort | null,
    @Inject(CONFIG) private readonly config: EngramConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  async process(job: Job): Promise<ConsolidateOutcome> {
    const item = { name: job.name, data: job.data } as JobOfQueue<typeof CONSOLIDATE.queue>;
    switch (item.name) {
      case JobName.ConsolidatePool:
        return inJobScope(job, item.data.pool, async () => {
          const outcome = await consolidatePool({ memory: this.memory, llm: this.llm, settings: this.config.consolidation }, item.data);
          if (outcome.refused.length > 0) this.logger.warn({ refused: outcome.refused }, 'model consolidation plan refused');
          return outcome;
        });
      default:
        return unknownJob(item.name, CONSOLIDATE.queue);
    }
  }
}
