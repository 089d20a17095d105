import { Module, type DynamicModule } from '@nestjs/common';
import { AnthropicMessagesController } from './controllers/anthropic-messages.controller.js';
import { ChatCompletionsController } from './controllers/chat-completions.controller.js';
import { HealthController } from './controllers/health.controller.js';
import { McpController } from './controllers/mcp.controller.js';
import { MemoriesController } from './controllers/memories.controller.js';
import { PassthroughController } from './controllers/passthrough.controller.js';
import { PoolsController } from './controllers/pools.controller.js';
import { ResponsesController } from './controllers/responses.controller.js';
import {
  ACCESS_SERVICE,
  HEALTH_SERVICE,
  MCP_SERVICE,
  MEMORY_REST_SERVICE,
  METRICS,
  SURFACES,
  TOKEN_COUNT_SERVICE,
  TURN_SERVICE,
} from './gateway.tokens.js';
import type { MetricsRepository } from './repositories/metrics.repository.js';
import type { AccessService } from './services/access.service.js';
import type { HealthService } from './services/health.service.js';
import type { McpService } from './services/mcp.service.js';
import type { MemoryRestService } from './services/memory-rest.service.js';
import type { Surfaces } from './services/surface-request.js';
import type { TokenCountService } from './services/token-count.service.js';
import type { TurnService } from './services/turn.service.js';

export interface GatewayAppDependencies {
  readonly turns: TurnService;
  readonly access: AccessService;
  readonly memories: MemoryRestService;
  readonly health: HealthService;
  readonly metrics: MetricsRepository;
  readonly surfaces: Surfaces;
  readonly tokenCounts: TokenCountService;
  readonly mcp: McpService;
}

/** Wiring only: main.ts builds the services as plain objects; Nest routes HTTP to them. */
@Module({})
export class AppModule {
  static register(dependencies: GatewayAppDependencies): DynamicModule {
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
        { provide: TURN_SERVICE, useValue: dependencies.turns },
        { provide: ACCESS_SERVICE, useValue: dependencies.access },
        { provide: MEMORY_REST_SERVICE, useValue: dependencies.memories },
        { provide: HEALTH_SERVICE, useValue: dependencies.health },
        { provide: METRICS, useValue: dependencies.metrics },
        { provide: SURFACES, useValue: dependencies.surfaces },
        { provide: TOKEN_COUNT_SERVICE, useValue: dependencies.tokenCounts },
        { provide: MCP_SERVICE, useValue: dependencies.mcp },
      ],
    };
  }
}
