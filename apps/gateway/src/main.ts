import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@engram/config';
import { InternalTokenSource, MemoryClient, MemoryPattern } from '@engram/contracts';
import {
  AnthropicMessagesAdapter,
  ApiKeys,
  authMode,
  MemoryToolExecutor,
  memoryToolsOffered,
  OpenAiChatAdapter,
  OpenAiResponsesAdapter,
  openNetworkWarning,
  GatewayTier1Cache,
} from '@engram/gateway-engine';
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
import { ChangeSubscriberRepository } from './repositories/change-subscriber.repository.js';
import { ExtractionQueueRepository } from './repositories/extraction-queue.repository.js';
import { MetricsRepository } from './repositories/metrics.repository.js';
import { UpstreamRepository } from './repositories/upstream.repository.js';
import { AccessService } from './services/access.service.js';
import { HealthService } from './services/health.service.js';
import { McpService } from './services/mcp.service.js';
import { MemoryGate } from './services/memory-gate.service.js';
import { MemoryInjection } from './services/memory-injection.js';
import { MemoryRestService } from './services/memory-rest.service.js';
import { TokenCountService } from './services/token-count.service.js';
import { TurnService } from './services/turn.service.js';

/** Largest request body accepted (base64 images fit); larger is a 413. */
const BODY_LIMIT_BYTES = 32 * 1024 * 1024;
/** Safety net behind the change announcements. */
const TIER1_TTL_MS = 30_000;
/** After memory fails to answer, requests skip it this long before asking again. */
const MEMORY_RETRY_AFTER_MS = 2_000;
/** Background liveness check of memory, so a cached Tier 1 never hides an outage for long. */
const MEMORY_PROBE_EVERY_MS = 1_000;

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger('gateway', config.logLevel);
  const keys = ApiKeys.parse(config.apiKeys);

  const memoryClient = MemoryClient.connect({
    replicas: config.memory.replicas,
    timeoutMs: config.memory.rpcTimeoutMs,
    token: new InternalTokenSource(config.internalToken, config.dataDir, config.encryptionKey),
    onReplicaChange: logReplicaChange(logger),
  });
  const redis = createFailFastRedis(config.redisUrl);
  const cache = new GatewayTier1Cache(memoryClient, { ttlMs: TIER1_TTL_MS });
  const subscriber = new ChangeSubscriberRepository(config.redisUrl, logger, {
    onChange: (message) => cache.changed(message),
    onResync: () => cache.clear(),
  });
  const metrics = new MetricsRepository();
  const extraction = new ExtractionQueueRepository(redis, memoryClient, logger);
  const gate = new MemoryGate(cache, logger, {
    retryAfterMs: MEMORY_RETRY_AFTER_MS,
    probeEveryMs: MEMORY_PROBE_EVERY_MS,
    cacheTrusted: () => subscriber.listening,
    ping: () => memoryClient.call(MemoryPattern.Ping, {}, Math.min(config.memory.rpcTimeoutMs, 1_000)),
  });
  gate.start();
  const access = new AccessService(keys, config.metricsToken);
  const chatUpstream = new UpstreamRepository({
    baseUrl: config.upstream.baseUrl,
    apiKey: config.upstream.apiKey,
    forwardClientKey: keys.open,
    auth: 'bearer',
    timeoutMs: config.upstream.timeoutMs,
  });
  const anthropicUpstream = new UpstreamRepository({
    baseUrl: config.upstream.anthropicBaseUrl,
    apiKey: config.upstream.anthropicApiKey,
    forwardClientKey: keys.open,
    auth: 'x-api-key',
    timeoutMs: config.upstream.timeoutMs,
  });
  const tools = new MemoryToolExecutor(memoryClient, (pool) => cache.evict(pool));
  const offeredTools = memoryToolsOffered(config.memoryToolMaxIterations);
  const memory = new MemoryInjection(gate, offeredTools);
  const turns = new TurnService({
    access,
    memory,
    tools,
    extraction,
    metrics,
    logger,
    maxIterations: config.memoryToolMaxIterations,
  });

  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request: IncomingMessage) => requestIdOf(request),
    requestIdHeader: false,
    logger: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({
      turns,
      access,
      memories: new MemoryRestService(memoryClient, cache, offeredTools),
      health: new HealthService(memoryClient, redis, Math.min(config.memory.rpcTimeoutMs, 1_000), authMode(keys)),
      metrics,
      surfaces: {
        chat: { route: 'chat.completions', adapter: new OpenAiChatAdapter(), upstream: chatUpstream },
        messages: { route: 'messages', adapter: new AnthropicMessagesAdapter(), upstream: anthropicUpstream },
        responses: { route: 'responses', adapter: new OpenAiResponsesAdapter(), upstream: chatUpstream },
      },
      tokenCounts: new TokenCountService({ access, memory, logger }),
      mcp: new McpService({ access, memory: memoryClient, tools, metrics, logger }),
    }),
    adapter,
    { logger: new NestPinoLogger(logger), bodyParser: false },
  );
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
    gate.stop();
    await app.close();
    await Promise.allSettled([chatUpstream.close(), anthropicUpstream.close(), extraction.close(), subscriber.close(), memoryClient.close()]);
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
