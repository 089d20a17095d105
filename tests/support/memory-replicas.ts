import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startParts } from './started-parts.js';
import { startRedis, type TestRedis } from './redis.js';
import { ScriptedOpenAiUpstream, type ChatReply, type ChatResponder } from './scripted-openai-upstream.js';
import { startGateway, startMemory, startWorker, type RunningGateway, type RunningMemory, type RunningWorker } from './stack.js';

/**
 * Redis, several memory processes, and a gateway and a worker that reach them all through
 * MEMORY_HOSTS. Every process shares one ENGRAM_INTERNAL_TOKEN: each replica has a data dir of its
 * own, so none can hand the others a generated one. `memoryEnv` points them at one event store
 * (ENGRAM_EVENT_STORE); without it each keeps its own file log (enough to test routing and failover).
 */
export interface ReplicaStack {
  readonly redis: TestRedis;
  readonly upstream: ScriptedOpenAiUpstream;
  /** The replicas in MEMORY_HOSTS order; `restart(i)` replaces an entry. */
  readonly replicas: RunningMemory[];
  readonly gateway: RunningGateway;
  readonly worker: RunningWorker | undefined;
  /** MEMORY_HOSTS, ENGRAM_INTERNAL_TOKEN and REDIS_URL, for another process that calls the replicas. */
  readonly clientEnv: Readonly<Record<string, string>>;
  /** Starts replica i again on its ports, with its data dir. */
  restart(index: number): Promise<RunningMemory>;
  stop(): Promise<void>;
}

export interface ReplicaStackOptions {
  readonly replicas?: number;
  readonly responder?: ChatResponder | readonly ChatReply[];
  readonly memoryEnv?: Readonly<Record<string, string>>;
  readonly gatewayEnv?: Readonly<Record<string, string>>;
  readonly worker?: boolean;
}

export function startReplicaStack(options: ReplicaStackOptions = {}): Promise<ReplicaStack> {
  return startParts(async (parts) => {
    const token = randomBytes(24).toString('hex');
    const redis = parts.add(await startRedis(), (started) => started.stop());
    const upstream = parts.add(await ScriptedOpenAiUpstream.start(options.responder ?? []), (started) => started.close());
    const memoryEnv = { ...options.memoryEnv, REDIS_URL: redis.url, ENGRAM_INTERNAL_TOKEN: token };
    const replicas: RunningMemory[] = [];
    // The replicas of the moment, each stopped with its data dir (restart replaces an entry).
    parts.add(replicas, async (running) => {
      await Promise.all(running.map((replica) => replica.stop()));
      for (const { dataDir } of running) rmSync(dataDir, { recursive: true, force: true });
    });
    for (let i = 0; i < (options.replicas ?? 2); i++) replicas.push(await startMemory(memoryEnv));
    const clientEnv = {
      REDIS_URL: redis.url,
      ENGRAM_INTERNAL_TOKEN: token,
      MEMORY_HOSTS: replicas.map((replica) => `127.0.0.1:${replica.port}`).join(','),
    };
    const gateway = parts.add(
      await startGateway({ UPSTREAM_BASE_URL: upstream.baseUrl, MEMORY_RPC_TIMEOUT_MS: '1000', ...clientEnv, ...options.gatewayEnv }),
      (started) => started.stop(),
    );
    const worker =
      options.worker === false
        ? undefined
        : parts.add(await startWorker({ ...clientEnv, UPSTREAM_BASE_URL: upstream.baseUrl, CONSOLIDATION_MODEL: 'off' }), (started) =>
            started.stop(),
          );
    return {
      redis,
      upstream,
      replicas,
      gateway,
      worker,
      clientEnv,
      restart: async (index) => {
        const old = replicas[index]!;
        await old.stop({ keepData: true });
        const again = await startMemory(memoryEnv, { dataDir: old.dataDir, port: old.port, healthPort: old.healthPort });
        replicas[index] = again;
        return again;
      },
      stop: () => parts.stopAll(),
    };
  });
}
