import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@engram/config';
import { InternalTokenSource, MemoryClient } from '@engram/contracts';
import { openNetworkWarning, type ApiKeys } from '@engram/gateway-engine';
import {
  createFailFastRedis,
  createLogger,
  exitOnStartFailure,
  logReplicaChange,
  logUncaughtErrors,
  NestPinoLogger,
  stopOnSignals,
} from '@engram/observability';
import type { FastifyInstance } from 'fastify';
import { AppModule } from './app.module.js';
import { serveConsole } from './http/console-assets.js';
import { OpenAiErrorFilter } from './http/openai-error.filter.js';
import { guardOpenMode } from './http/open-mode-guard.js';
import { API_KEYS } from './gateway.tokens.js';

/** Largest request body accepted (base64 images fit); larger is a 413. */
const BODY_LIMIT_BYTES = 32 * 1024 * 1024;
async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger('gateway', config.logLevel);

  const memoryClient = MemoryClient.connect({
    replicas: config.memory.replicas,
    timeoutMs: config.memory.rpcTimeoutMs,
    token: new InternalTokenSource(config.internalToken, config.dataDir, config.encryptionKey),
    onReplicaChange: logReplicaChange(logger),
  });
  const redis = createFailFastRedis(config.redisUrl);

  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request: IncomingMessage) => requestIdOf(request),
    requestIdHeader: false,
    logger: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register({ config, logger, memory: memoryClient, redis }), adapter, {
    logger: new NestPinoLogger(logger),
    bodyParser: false,
  });
  const keys = app.get<ApiKeys>(API_KEYS);
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  // Bodies stay raw bytes: forwarded verbatim when memory is off, parsed once by the gateway otherwise.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  if (keys.open) guardOpenMode(fastify, config.allowedHosts, logger);
  fastify.addHook('onResponse', (request, reply, done) => {
    // The path only: a query string holds what a person searched for (`?q=`), which must not outlive a purge in the logs.
    const path = request.url.split('?', 1)[0]!;
    const level = QUIET_PATHS.has(path) ? 'debug' : 'info';
    logger[level](
      {
        requestId: request.id,
        method: request.method,
        path,
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
    done();
  });
  app.useGlobalFilters(new OpenAiErrorFilter(logger));
  serveConsole(app, logger);

  if (!keys.open && config.upstream.apiKey === undefined) {
    logger.warn(
      'ENGRAM_API_KEYS is set but UPSTREAM_API_KEY is not: Engram keys are never forwarded, so requests reach the upstream without credentials',
    );
  }
  const exposed = openNetworkWarning(keys, config.gateway.host);
  if (exposed) logger.warn({ host: config.gateway.host }, exposed);
  await app.listen(config.gateway.port, config.gateway.host);
  logger.info({ port: config.gateway.port, upstream: config.upstream.baseUrl, keys: keys.open ? 'open mode' : 'keyed' }, 'gateway ready');

  stopOnSignals(logger, async () => {
    // Nest stops what it built (the gate's probe, the upstream pools, the queue, the subscriber); main.ts what it opened.
    await app.close();
    await Promise.allSettled([memoryClient.close()]);
    redis.disconnect();
  });
  // A failure never takes the process down: log it and keep serving.
  logUncaughtErrors(logger, 'keep-running');
}

/** Probes polled every few seconds: their access lines would drown the rest at info. */
const QUIET_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** The client's x-request-id when it is a sane token, else a new UUID. */
function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
}

bootstrap().catch(exitOnStartFailure('gateway'));
