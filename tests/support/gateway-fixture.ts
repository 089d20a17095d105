import OpenAI from 'openai';
import { freePort } from './ports.js';
import { startRedis, type TestRedis } from './redis.js';
import { startParts } from './started-parts.js';
import { ScriptedOpenAiUpstream, type ChatReply, type ChatResponder, type ScriptedOpenAiOptions } from './scripted-openai-upstream.js';
import { startGateway, startMemory, type RunningGateway, type RunningMemory } from './stack.js';

export interface GatewayStack {
  readonly redis: TestRedis;
  /** Absent when started with `memory: false` (the gateway then points at a port nobody answers). */
  readonly memory: RunningMemory | undefined;
  readonly upstream: ScriptedOpenAiUpstream;
  readonly gateway: RunningGateway;
  /** The official SDK pointed at the gateway (optionally under a pool prefix). */
  client(options?: { apiKey?: string; pool?: string; headers?: Record<string, string> }): OpenAI;
  /** Stops Redis now (for outage tests); `stop` then leaves it alone. */
  stopRedis(): Promise<void>;
  stop(): Promise<void>;
}

export interface GatewayStackOptions {
  readonly responder: ChatResponder | readonly ChatReply[];
  readonly upstreamOptions?: ScriptedOpenAiOptions;
  readonly gatewayEnv?: Readonly<Record<string, string>>;
  readonly memoryEnv?: Readonly<Record<string, string>>;
  /** Start a real memory service (default true). */
  readonly memory?: boolean;
  /** The memory service's data dir, kept when the stack stops (default: a temp one, removed). */
  readonly memoryDataDir?: string;
}

/** Real Redis, real memory service, real gateway, scripted upstream: one per test file. */
export function startGatewayStack(options: GatewayStackOptions): Promise<GatewayStack> {
  return startParts(async (parts) => {
    const redis = await startRedis();
    let redisStopped: Promise<void> | undefined;
    const stopRedis = (): Promise<void> => (redisStopped ??= redis.stop());
    parts.add(redis, stopRedis);
    const upstream = parts.add(await ScriptedOpenAiUpstream.start(options.responder, options.upstreamOptions), (started) => started.close());
    const memory =
      options.memory === false
        ? undefined
        : parts.add(
            await startMemory({ ...options.memoryEnv, REDIS_URL: redis.url }, options.memoryDataDir ? { dataDir: options.memoryDataDir } : {}),
            (started) => started.stop(),
          );
    const memoryEnv = memory ? memory.clientEnv : { MEMORY_HOST: '127.0.0.1', MEMORY_PORT: String(await freePort()) };
    const gateway = parts.add(
      await startGateway({
        UPSTREAM_BASE_URL: upstream.baseUrl,
        REDIS_URL: redis.url,
        MEMORY_RPC_TIMEOUT_MS: '1000',
        ...memoryEnv,
        ...options.gatewayEnv,
      }),
      (started) => started.stop(),
    );
    return {
      redis,
      stopRedis,
      memory,
      upstream,
      gateway,
      client: ({ apiKey = 'sk-client', pool, headers } = {}) =>
        new OpenAI({
          baseURL: pool ? `${gateway.url}/pools/${pool}/v1` : `${gateway.url}/v1`,
          apiKey,
          maxRetries: 0,
          timeout: 20_000,
          ...(headers ? { defaultHeaders: headers } : {}),
        }),
      stop: () => parts.stopAll(),
    };
  });
}

/** The text of a chat message content (string or parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => String((part as { text?: unknown }).text ?? '')).join('');
  return '';
}
