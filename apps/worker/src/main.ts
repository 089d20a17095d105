import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@engram/config';
import { describeEmbedder, openEmbedder } from '@engram/embeddings';
import { createLogger, exitOnStartFailure, logUncaughtErrors, NestPinoLogger, stopOnSignals } from '@engram/observability';
import { Redis } from 'ioredis';
import { assertEveryJobHandled } from './handler-coverage.js';
import { PROCESSOR_DECLARATIONS } from './processors/declarations.js';
import { assertProcessorsMatchDeclarations } from './processors/index.js';
import { createLlm } from './repositories/llm.repository.js';
import { createMemoryClient } from './repositories/memory.repository.js';
import { parseServedQueues } from './served-queues.js';
import { WorkerModule } from './worker.module.js';

/** Within compose's default stop grace period (10 s). */
const SHUTDOWN_GRACE_MS = 8_000;

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger('worker', config.logLevel);
  logUncaughtErrors(logger, 'exit');
  assertEveryJobHandled(PROCESSOR_DECLARATIONS);
  assertProcessorsMatchDeclarations(PROCESSOR_DECLARATIONS);
  const served = parseServedQueues(config.worker.queues);

  // BullMQ workers block on Redis: their connection must never give up on a command.
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  redis.on('error', (error) => logger.warn({ error: error.message }, 'redis connection error'));
  const memory = createMemoryClient(config, logger);
  const llm = createLlm(config);
  // Entries are embedded here: with EMBEDDINGS_MODEL_DIR the model is loaded into this process.
  const embedder = config.embeddings ? await openEmbedder(config.embeddings) : null;

  const app = await NestFactory.create<NestFastifyApplication>(
    WorkerModule.register({ config, logger, redis, memory, llm, embedder, clock: { now: () => new Date() }, served }),
    new FastifyAdapter(),
    { logger: new NestPinoLogger(logger) },
  );
  await app.listen(config.worker.healthPort, '127.0.0.1');
  logger.info(
    {
      queues: served,
      health: config.worker.healthPort,
      consolidation: llm ? config.consolidation.model : 'deterministic',
      embeddings: embedder ? describeEmbedder(embedder) : 'off',
    },
    'worker ready',
  );

  // Closing waits for active jobs and for Redis; with Redis gone it would wait forever. An
  // unfinished job is safe to abandon: its lock expires and another worker runs it again.
  stopOnSignals(
    logger,
    async () => {
      await app.close();
      await memory.close();
      await embedder?.close();
      redis.disconnect();
    },
    SHUTDOWN_GRACE_MS,
  );
}

bootstrap().catch(exitOnStartFailure('worker'));
