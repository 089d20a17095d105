import { Inject, Injectable } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import type { MemoryClient, ReplicaReadiness } from '@engram/contracts';
import { authMode, type ApiKeys, type AuthMode } from '@engram/gateway-engine';
import { pingRedis } from '@engram/observability';
import type { Redis } from 'ioredis';
import { API_KEYS, CONFIG, MEMORY_CLIENT, REDIS } from '../gateway.tokens.js';

type MemoryState = 'up' | 'down' | 'read-only';

/** One memory replica (MEMORY_HOSTS) as /readyz names it. */
export interface ReplicaCheck {
  /** host:port as configured. */
  readonly address: string;
  readonly state: MemoryState;
  /** Since when calls go to it (up) or around it (down); null before the first call. */
  readonly since: string | null;
  /** Why it is down. */
  readonly error?: string;
  readonly lastSeq: number | null;
}

export interface Readiness {
  readonly ready: boolean;
  /**
   * memory: `up` while at least one replica answers and takes writes; `read-only`: the ones that answer
   * have a full data disk, they take no writes (stores answer 503) until space is freed.
   */
  readonly checks: { readonly memory: MemoryState; readonly redis: 'up' | 'down' };
  /** Each memory replica the gateway calls, in MEMORY_HOSTS order. */
  readonly memoryReplicas: readonly ReplicaCheck[];
  /** Since when memory's disk is full, and the error it got; absent otherwise. */
  readonly memoryDiskFull?: { readonly since: string; readonly error: string };
  /** `open`: no ENGRAM_API_KEYS, anyone who reaches the port may use every pool. */
  readonly auth: AuthMode;
}

/** `/readyz`: whether memory (each replica) and Redis answer right now, which one is missing, whether memory takes writes, and whether keys are required. */
@Injectable()
export class HealthService {
  private readonly timeoutMs: number;
  private readonly auth: AuthMode;

  constructor(
    @Inject(MEMORY_CLIENT) private readonly memory: Pick<MemoryClient, 'readiness'>,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(CONFIG) config: Pick<EngramConfig, 'memory'>,
    @Inject(API_KEYS) keys: ApiKeys,
  ) {
    // A probe answers quickly: a second at most, less when memory calls have a shorter deadline.
    this.timeoutMs = Math.min(config.memory.rpcTimeoutMs, 1_000);
    this.auth = authMode(keys);
  }

  async readiness(): Promise<Readiness> {
    const [replicas, redis] = await Promise.all([this.memory.readiness(this.timeoutMs), pingRedis(this.redis, this.timeoutMs)]);
    const memory = memoryStateOf(replicas);
    const diskFull = memory === 'read-only' ? replicas.find((replica) => replica.diskFull)?.diskFull : undefined;
    return {
      ready: memory === 'up' && redis === 'up',
      checks: { memory, redis },
      memoryReplicas: replicas.map(replicaCheckOf),
      ...(diskFull ? { memoryDiskFull: diskFull } : {}),
      auth: this.auth,
    };
  }
}

function memoryStateOf(replicas: readonly ReplicaReadiness[]): MemoryState {
  if (replicas.some((replica) => replica.ping === 'up')) return 'up';
  return replicas.some((replica) => replica.ping === 'read-only') ? 'read-only' : 'down';
}

function replicaCheckOf(replica: ReplicaReadiness): ReplicaCheck {
  return {
    address: replica.address,
    state: replica.ping,
    since: replica.since,
    ...(replica.ping === 'down' && replica.error !== null ? { error: replica.error } : {}),
    lastSeq: replica.lastSeq,
  };
}
