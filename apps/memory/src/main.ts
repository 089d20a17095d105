import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigError, loadConfig } from '@engram/config';
import { createLogger, NestPinoLogger } from '@engram/observability';
import { openMemoryService } from '@engram/storage';
import { AppModule } from './app.module.js';
import { createFailFastRedis } from './repositories/redis.factory.js';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger('memory', config.logLevel);
  const memory = await openMemoryService({ dataDir: config.dataDir, tier1MaxChars: config.tier1MaxChars, logger });
  const redis = createFailFastRedis(config.redisUrl);
  redis.on('error', () => undefined); // readiness reports it; the outbox logs the consequence once

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config, logger, memory, redis }),
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

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'memory service stopping');
    await app.close();
    await memory.close();
    redis.disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

bootstrap().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : error instanceof Error ? error.stack : String(error);
  process.stderr.write(`engram memory failed to start: ${message}\n`);
  process.exit(1);
});
