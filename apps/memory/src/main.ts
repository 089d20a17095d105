import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@engram/config';
import { ensureInternalToken } from '@engram/contracts';
import { describeEmbedder, openEmbedder } from '@engram/embeddings';
import { createFailFastRedis, createLogger, exitOnStartFailure, logUncaughtErrors, NestPinoLogger, stopOnSignals } from '@engram/observability';
import { openMemoryService } from '@engram/memory-store';
import { AppModule } from './app.module.js';
import { MetricsRepository } from './repositories/metrics.repository.js';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger('memory', config.logLevel);
  logUncaughtErrors(logger, 'exit');
  const metrics = new MetricsRepository();
  // Each search's query is embedded here: with EMBEDDINGS_MODEL_DIR the model is loaded into this process.
  const embedder = config.embeddings ? await openEmbedder(config.embeddings) : null;
  if (embedder) logger.info(describeEmbedder(embedder), 'hybrid search: embedding queries');
  const memory = await openMemoryService({
    dataDir: config.dataDir,
    tier1MaxChars: config.tier1MaxChars,
    logger,
    encryptionKey: config.encryptionKey,
    // ENGRAM_EVENT_STORE=postgres://…: one replica of several on a shared table; unset: the data dir's file log.
    eventStore: config.eventStore,
    // After a failed fsync nothing can be assumed about the log file: exit, and the restart
    // (compose, npm start) recovers by cutting any torn tail.
    onFatal: () => process.exit(1),
    ...(config.embeddings && embedder
      ? {
          embeddings: {
            embedder,
            queryTimeoutMs: config.embeddings.queryTimeoutMs,
            minSimilarity: config.embeddings.minSimilarity,
            observer: metrics,
          },
        }
      : {}),
  });
  const redis = createFailFastRedis(config.redisUrl);
  const internalToken = ensureInternalToken(config.internalToken, config.dataDir, config.encryptionKey);

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config, logger, memory, redis, metrics, internalToken, embeddingModel: embedder?.model ?? null }),
    new FastifyAdapter(),
    { logger: new NestPinoLogger(logger) },
  );
  app.connectMicroservice<MicroserviceOptions>({
    transport: Transport.TCP,
    options: { host: config.memory.host, port: config.memory.port },
  });
  await app.startAllMicroservices();
  await app.listen(config.memory.healthPort, config.memory.host);
  logger.info(
    { rpc: `${config.memory.host}:${config.memory.port}`, health: config.memory.healthPort, dataDir: config.dataDir },
    'memory service ready',
  );

  stopOnSignals(logger, async () => {
    await app.close();
    await memory.close();
    await embedder?.close();
    redis.disconnect();
  });
}

bootstrap().catch(exitOnStartFailure('memory'));
