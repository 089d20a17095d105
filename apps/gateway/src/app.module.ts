import { Module, type DynamicModule } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { MemoryPattern, type MemoryClient } from '@engram/contracts';
import {
  AnthropicMessagesAdapter,
  ApiKeys,
  GatewayTier1Cache,
  MemoryToolExecutor,
  memoryToolsOffered,
  OpenAiChatAdapter,
  OpenAiResponsesAdapter,
} from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import type { Redis } from 'ioredis';
import { AnthropicMessagesController } from './controllers/anthropic-messages.controller.js';
import { ChatCompletionsController } from './controllers/chat-completions.controller.js';
import { HealthController } from './controllers/health.controller.js';
import { McpController } from './controllers/mcp.controller.js';
import { MemoriesController } from './controllers/memories.controller.js';
import { PassthroughController } from './controllers/passthrough.controller.js';
import { PoolsController } from './controllers/pools.controller.js';
import { ResponsesController } from './controllers/responses.controller.js';
import { ModelRoutes } from './http/model-routes.js';
import { OpenModeGuard } from './http/open-mode-guard.js';
import {
  ANTHROPIC_UPSTREAM,
  API_KEYS,
  CHAT_UPSTREAM,
  CONFIG,
  LOGGER,
  MEMORY_CLIENT,
  MEMORY_GATE_OPTIONS,
  MEMORY_TOOL_EXECUTOR,
  OFFERED_TOOLS,
  REDIS,
  SURFACES,
  TIER1_CACHE,
} from './gateway.tokens.js';
import { ChangeSubscriberRepository } from './repositories/change-subscriber.repository.js';
import { ExtractionQueueRepository } from './repositories/extraction-queue.repository.js';
import { MetricsRepository } from './repositories/metrics.repository.js';
import { UpstreamRepository } from './repositories/upstream.repository.js';
import { AccessService } from './services/access.service.js';
import { HealthService } from './services/health.service.js';
import { McpService } from './services/mcp.service.js';
import { MemoryGate, type MemoryGateOptions } from './services/memory-gate.service.js';
import { MemoryInjection } from './services/memory-injection.js';
import { MemoryRestService } from './services/memory-rest.service.js';
import type { Surfaces } from './services/surface-request.js';
import { TokenCountService } from './services/token-count.service.js';
import { TurnService } from './services/turn.service.js';

/** What main.ts opens before Nest starts: the configuration, the logger and the connections. */
export interface GatewayDependencies {
  readonly config: EngramConfig;
  readonly logger: Logger;
  readonly memory: MemoryClient;
  readonly redis: Redis;
}

/** Safety net behind the change announcements. */
const TIER1_TTL_MS = 30_000;
/** After memory fails to answer, requests skip it this long before asking again. */
const MEMORY_RETRY_AFTER_MS = 2_000;
/** Background liveness check of memory, so a cached Tier 1 never hides an outage for long. */
const MEMORY_PROBE_EVERY_MS = 1_000;

/**
 * Wiring only: what main.ts opened, as values; the library objects made from it (`useFactory`); the
 * app's classes, built by Nest.
 */
@Module({})
export class AppModule {
  static register(deps: GatewayDependencies): DynamicModule {
    return {
      module: AppModule,
      controllers: [
        ChatCompletionsController,
        AnthropicMessagesController,
        ResponsesController,
        MemoriesController,
        PoolsController,
        McpController,
        HealthController,
        PassthroughController,
      ],
      providers: [
        { provide: CONFIG, useValue: deps.config },
        { provide: LOGGER, useValue: deps.logger },
        { provide: MEMORY_CLIENT, useValue: deps.memory },
        { provide: REDIS, useValue: deps.redis },
        { provide: API_KEYS, useValue: ApiKeys.parse(deps.config.apiKeys) },
        { provide: OFFERED_TOOLS, useValue: memoryToolsOffered(deps.config.memoryToolMaxIterations) },
        { provide: TIER1_CACHE, useValue: new GatewayTier1Cache(deps.memory, { ttlMs: TIER1_TTL_MS }) },
        {
          provide: MEMORY_TOOL_EXECUTOR,
          inject: [TIER1_CACHE],
          useFactory: (cache: GatewayTier1Cache) => new MemoryToolExecutor(deps.memory, (pool) => cache.evict(pool)),
        },
        {
          provide: MEMORY_GATE_OPTIONS,
          inject: [ChangeSubscriberRepository],
          useFactory: (subscriber: ChangeSubscriberRepository): MemoryGateOptions => ({
            retryAfterMs: MEMORY_RETRY_AFTER_MS,
            probeEveryMs: MEMORY_PROBE_EVERY_MS,
            cacheTrusted: () => subscriber.listening,
            ping: () => deps.memory.call(MemoryPattern.Ping, {}, Math.min(deps.config.memory.rpcTimeoutMs, 1_000)),
          }),
        },
        {
          provide: CHAT_UPSTREAM,
          inject: [API_KEYS],
          useFactory: (keys: ApiKeys) =>
            new UpstreamRepository({
              baseUrl: deps.config.upstream.baseUrl,
              apiKey: deps.config.upstream.apiKey,
              forwardClientKey: keys.open,
              auth: 'bearer',
              timeoutMs: deps.config.upstream.timeoutMs,
            }),
        },
        {
          provide: ANTHROPIC_UPSTREAM,
          inject: [API_KEYS],
          useFactory: (keys: ApiKeys) =>
            new UpstreamRepository({
              baseUrl: deps.config.upstream.anthropicBaseUrl,
              apiKey: deps.config.upstream.anthropicApiKey,
              forwardClientKey: keys.open,
              auth: 'x-api-key',
              timeoutMs: deps.config.upstream.timeoutMs,
            }),
        },
        {
          provide: SURFACES,
          inject: [CHAT_UPSTREAM, ANTHROPIC_UPSTREAM],
          useFactory: (chat: UpstreamRepository, anthropic: UpstreamRepository): Surfaces => ({
            chat: { route: 'chat.completions', adapter: new OpenAiChatAdapter(), upstream: chat },
            messages: { route: 'messages', adapter: new AnthropicMessagesAdapter(), upstream: anthropic },
            responses: { route: 'responses', adapter: new OpenAiResponsesAdapter(), upstream: chat },
          }),
        },
        ChangeSubscriberRepository,
        ExtractionQueueRepository,
        MetricsRepository,
        AccessService,
        MemoryGate,
        MemoryInjection,
        TurnService,
        TokenCountService,
        MemoryRestService,
        HealthService,
        McpService,
        OpenModeGuard,
        ModelRoutes,
      ],
    };
  }
}
