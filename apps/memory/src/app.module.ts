import { Module, type DynamicModule } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import type { Logger } from '@engram/observability';
import { join } from 'node:path';
import { ExtractionSpool, type MemoryService } from '@engram/memory-store';
import type { Redis } from 'ioredis';
import { HealthController } from './controllers/health.controller.js';
import { MetricsController } from './controllers/metrics.controller.js';
import { MemoryRpcController } from './controllers/memory-rpc.controller.js';
import { InternalTokenGuard } from './controllers/internal-token.guard.js';
import { OperatorAccessGuard } from './controllers/operator-access.guard.js';
import { COMMIT_FEED, CONFIG, EMBEDDING_MODEL, EXTRACTION_SPOOL, INTERNAL_TOKEN, LOGGER, MEMORY_SERVICE, METRICS, REDIS } from './memory.tokens.js';
import { ChangePublisherRepository } from './repositories/change-publisher.repository.js';
import { JobQueueRepository } from './repositories/job-queue.repository.js';
import type { MetricsRepository } from './repositories/metrics.repository.js';
import { EmbeddingBackfillService } from './services/embedding-backfill.service.js';
import { ExtractionSpoolService } from './services/extraction-spool.service.js';
import { OutboxService } from './services/outbox.service.js';
import { PurgeService } from './services/purge.service.js';

export interface MemoryAppDependencies {
  readonly config: EngramConfig;
  readonly logger: Logger;
  readonly memory: MemoryService;
  readonly redis: Redis;
  readonly metrics: MetricsRepository;
  /** The RPC channel's shared secret (see InternalTokenGuard). */
  readonly internalToken: string;
  /** The name the vectors of the configured embedder are stored under; null with hybrid search off. */
  readonly embeddingModel: string | null;
}

/** Wiring only. The store is opened (and recovered) before Nest starts, so the app never serves a half-open store. */
@Module({})
export class AppModule {
  static register(dependencies: MemoryAppDependencies): DynamicModule {
    return {
      module: AppModule,
      controllers: [MemoryRpcController, HealthController, MetricsController],
      providers: [
        { provide: CONFIG, useValue: dependencies.config },
        { provide: LOGGER, useValue: dependencies.logger },
        { provide: MEMORY_SERVICE, useValue: dependencies.memory },
        { provide: COMMIT_FEED, useValue: dependencies.memory.commits },
        { provide: REDIS, useValue: dependencies.redis },
        { provide: METRICS, useValue: dependencies.metrics },
        { provide: INTERNAL_TOKEN, useValue: dependencies.internalToken },
        { provide: EMBEDDING_MODEL, useValue: dependencies.embeddingModel },
        InternalTokenGuard,
        OperatorAccessGuard,
        {
          provide: EXTRACTION_SPOOL,
          useValue: new ExtractionSpool(join(dependencies.config.dataDir, 'spool', 'extract'), undefined, dependencies.config.encryptionKey),
        },
        JobQueueRepository,
        ChangePublisherRepository,
        OutboxService,
        EmbeddingBackfillService,
        PurgeService,
        ExtractionSpoolService,
      ],
    };
  }
}
