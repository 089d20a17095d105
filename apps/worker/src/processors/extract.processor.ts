import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { EngramConfig } from '@engram/config';
import { JobName, SealedJobError, openedExtractionData, workerOptionsFor, type JobOfQueue, type SealedExtractExchangeData } from '@engram/jobs';
import { extractExchange, type ExtractOutcome, type MemoryPort } from '@engram/worker-handlers';
import { UnrecoverableError, type Job } from 'bullmq';
import { CONFIG, MEMORY } from '../worker.tokens.js';
import { EXTRACT } from './declarations.js';
import { inJobScope, jobContext, unknownJob } from './job-run.js';

@Processor(EXTRACT.queue, workerOptionsFor(EXTRACT.queue))
export class ExtractProcessor extends WorkerHost {
  constructor(
    @Inject(MEMORY) private readonly memory: MemoryPort,
    @Inject(CONFIG) private readonly config: Pick<EngramConfig, 'encryptionKey'>,
  ) {
    super();
  }

  async process(job: Job): Promise<ExtractOutcome> {
    const item = { name: job.name, data: job.data } as JobOfQueue<typeof EXTRACT.queue>;
    switch (item.name) {
      case JobName.ExtractExchange: {
        const data = this.opened(item.data);
        const outcome = await inJobScope(job, data.pool, () => extractExchange(this.memory, data, jobContext(job)));
        // The exchange is needed only until it is extracted: a finished job kept for a day must not
        // hold the conversation's text (a purge could miss what extraction reworded).
        const { pool, requestId, exchangeId } = data;
        await job.updateData({ pool, requestId, exchangeId, suggestions: [], exchange: { user: '', assistant: '' } }).catch(() => undefined);
        return outcome;
      }
      default:
        return unknownJob(item.name, EXTRACT.queue);
    }
  }

  /** Sealed texts opened with the at-rest key; a job this worker cannot open fails once, saying why (a retry would not open it either). */
  private opened(data: JobOfQueue<typeof EXTRACT.queue>['data'] | SealedExtractExchangeData) {
    try {
      return openedExtractionData(data, this.config.encryptionKey);
    } catch (error) {
      if (error instanceof SealedJobError) throw new UnrecoverableError(error.message);
      throw error;
    }
  }
}
