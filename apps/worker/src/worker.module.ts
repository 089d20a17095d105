import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import type { EngramConfig } from '@engram/config';
import type { MemoryClient } from '@engram/contracts';
import type { QueueName } from '@engram/jobs';
import type { Clock, EmbedderPort, LlmPort } from '@engram/worker-handlers';
import type { Logger } from '@engram/observability';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { HealthController } from './controllers/health.controller.js';
import { OperatorAccessGuard } from './controllers/operator-access.guard.js';
import { PROCESSORS } from './processors/index.js';
import { memoryPort } from './repositories/memory.repository.js';
import { DecaySchedulerService } from './services/decay-scheduler.service.js';
import { JobLogService } from './services/job-log.service.js';
import { CLOCK, CONFIG, EMBEDDER, LLM, LOGGER, MEMORY, MEMORY_CLIENT, QUEUES, REDIS, SERVED_QUEUES } from './worker.tokens.js';

export interface WorkerDependencies {
  readonly config: EngramConfig;
  readonly logger: Logger;
  readonly redis: Redis;
  readonly memory: MemoryClient;
  readonly llm: LlmPort | null;
  /** Null when neither EMBEDDINGS_BASE_URL nor EMBEDDINGS_MODEL_DIR is set (no embedding jobs are made then). */
  readonly embedder: EmbedderPort | null;
  readonly clock: Clock;
  readonly served: readonly QueueName[];
}

/** Wiring only: BullMQ on the shared connection, one processor per served queue, health. */
@Module({})
export class WorkerModule {
  static register(deps: WorkerDependencies): DynamicModule {
    const served = [...deps.served];
    return {
      module: WorkerModule,
      imports: [BullModule.forRoot({ connection: deps.redis }), BullModule.registerQueue(...served.map((name) => ({ name })))],
      controllers: [HealthController],
      providers: [
        { provide: CONFIG, useValue: deps.config },
        { provide: LOGGER, useValue: deps.logger },
        { provide: REDIS, useValue: deps.redis },
        { provide: MEMORY_CLIENT, useValue: deps.memory },
        { provide: MEMORY, useValue: memoryPort(deps.memory) },
        { provide: LLM, useValue: deps.llm },
        { provide: EMBEDDER, useValue: deps.embedder },
        { provide: CLOCK, useValue: deps.clock },
        { provide: SERVED_QUEUES, useValue: served },
        {
          provide: QUEUES,
          inject: [LOGGER, ...served.map((name) => getQueueToken(name))],
          useFactory: (logger: Logger, ...queues: Queue[]) => {
            // Without a listener BullMQ prints each connection error as a multi-line console.error.
            // The shared connection already logs the outage (main.ts); here one debug line each.
            for (const [index, queue] of queues.entries())
              queue.on('error', (error) => logger.debug({ queue: served[index], error: error.message }, 'queue error'));
            return new Map(served.map((name, index) => [name, queues[index]]));
          },
        },
        ...served.map((name) => PROCESSORS[name]),
        DecaySchedulerService,
        JobLogService,
        OperatorAccessGuard,
      ],
    };
  }
}
