import 'reflect-metadata';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions } from 'node:http';
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
import type { FastifyInstance, FastifyServerFactoryHandler } from 'fastify';
import { AppModule } from './app.module.js';
import { logAnswered } from './http/access-log.js';
import { BODY_LIMIT_BYTES } from './http/body-limit.js';
import { serveConsole } from './http/console-assets.js';
import { ModelRoutes } from './http/model-routes.js';
import { OpenAiErrorFilter } from './http/openai-error.filter.js';
import { OpenModeGuard } from './http/open-mode-guard.js';
import { requestIdOf } from './http/request-id.js';
import { API_KEYS } from './gateway.tokens.js';

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

  // Built with the app below; the server takes requests only once it listens.
  const built: { modelRoutes?: ModelRoutes } = {};
  const adapter = new FastifyAdapter({
    // The model routes' requests reach ModelRoutes first; what it does not take goes to Fastify.
    serverFactory: (fastifyHandler: FastifyServerFactoryHandler, options: ServerSettings) =>
      httpServer((request, response) => {
        if (!built.modelRoutes?.serve(request, response)) fastifyHandler(request, response);
      }, options),
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
  const modelRoutes = app.get(ModelRoutes);
  built.modelRoutes = modelRoutes;
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  // Bodies stay raw bytes: forwarded verbatim when memory is off, parsed once by the gateway otherwise.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  app.get(OpenModeGuard).install(fastify);
  fastify.addHook('onResponse', (request, reply, done) => {
    logAnswered(logger, {
      requestId: request.id,
      method: request.method,
      url: request.url,
      route: request.routeOptions.url,
      status: reply.statusCode,
      ms: reply.elapsedTime,
    });
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
    // Fastify answers 503 from the start of app.close(): the model routes leave their requests to it from then on.
    modelRoutes.close();
    await app.close();
    await Promise.allSettled([memoryClient.close()]);
    redis.disconnect();
  });
  // A failure never takes the process down: log it and keep serving.
  logUncaughtErrors(logger, 'keep-running');
}

/** What Fastify hands a serverFactory: its options, defaults filled in. */
interface ServerSettings {
  readonly http?: ServerOptions;
  readonly keepAliveTimeout?: number;
  readonly requestTimeout?: number;
  readonly connectionTimeout?: number;
  readonly maxRequestsPerSocket?: number;
}

/** Node's HTTP server with the settings Fastify gives its own (it makes none when given a serverFactory). */
function httpServer(listener: RequestListener, options: ServerSettings): Server {
  const server = createServer(options.http ?? {}, listener);
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  server.setTimeout(options.connectionTimeout ?? 0);
  if (options.maxRequestsPerSocket !== undefined && options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
  return server;
}

bootstrap().catch(exitOnStartFailure('gateway'));
