import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom, timeout, TimeoutError } from 'rxjs';
import { INTERNAL_TOKEN_METADATA_KEY, type InternalTokenSource } from './internal-token.js';
import { repeatableAfterBrokenCall, transportFailureOf, type CallFailure } from './memory-failover.js';
import { MemoryError } from './memory-error.js';
import type { MemoryContract, PingResponse } from './memory-messages.js';
import { MemoryPattern } from './memory-pattern.js';
import { ReplicaSet, type ReplicaHealth } from './memory-replica-set.js';

/** One memory process the client can call. */
export interface MemoryReplica {
  /** host:port, as configured and as /readyz names it. */
  readonly address: string;
  readonly proxy: ClientProxy;
}

/** A replica's state as /readyz shows it: what the client knows, and what a ping answered just now. */
export interface ReplicaReadiness extends ReplicaHealth {
  /** `read-only`: it answers but its data disk is full (see PingResponse.diskFull). */
  readonly ping: 'up' | 'down' | 'read-only';
  readonly lastSeq: number | null;
  readonly diskFull: PingResponse['diskFull'];
}

export interface MemoryClientOptions {
  readonly defaultTimeoutMs: number;
  readonly token?: InternalTokenSource;
  /** How often a replica marked down is pinged to bring it back; with one replica nothing is marked down. */
  readonly probeEveryMs?: number;
  /** Told when a replica goes down or comes back (the caller logs it). */
  readonly onReplicaChange?: (change: { readonly address: string; readonly state: 'up' | 'down'; readonly error?: string }) => void;
}

/** How long a call waits for a connection to a replica (at most half its deadline) before trying the next. */
const CONNECT_TIMEOUT_MS = 1_000;

/** No connection was made in time: nothing was sent. */
class NotConnectedError extends Error {
  readonly code = 'ETIMEDOUT_CONNECT';
}

/** A replica marked down is pinged this often until it answers again. */
const DEFAULT_PROBE_EVERY_MS = 1_000;
const PROBE_TIMEOUT_MS = 1_000;

/**
 * The only way other processes reach memory: a typed call per pattern, with a deadline, to one of
 * the memory replicas (MEMORY_HOSTS; one with MEMORY_HOST/MEMORY_PORT). Service errors arrive as
 * MemoryError with the service's code; silence past the deadline, or no replica reachable, as
 * MemoryError('unavailable'). A call fails over to the next replica when its connection was refused,
 * and, for a call that may run twice (repeatableAfterBrokenCall), when it broke with the call on it.
 */
export class MemoryClient {
  private readonly replicas: ReplicaSet<MemoryReplica>;
  private readonly defaultTimeoutMs: number;
  private readonly token: InternalTokenSource | undefined;
  private readonly probe: NodeJS.Timeout | undefined;

  constructor(
    replicas: readonly MemoryReplica[],
    private readonly options: MemoryClientOptions,
  ) {
    this.replicas = new ReplicaSet(replicas);
    this.defaultTimeoutMs = options.defaultTimeoutMs;
    this.token = options.token;
    // Every packet carries the channel's token in its metadata, never in the payload.
    for (const { proxy } of replicas) {
      proxy.setOnDispatchHook((packet) => {
        const current = this.token?.current();
        if (current) packet.metadata = { ...packet.metadata, [INTERNAL_TOKEN_METADATA_KEY]: current };
      });
    }
    if (replicas.length > 1) {
      this.probe = setInterval(() => void this.probeDown(), options.probeEveryMs ?? DEFAULT_PROBE_EVERY_MS);
      this.probe.unref();
    }
  }

  /** A client over Nest TCP to each memory replica, presenting the token on every call. */
  static connect(options: {
    readonly replicas: readonly { readonly host: string; readonly port: number }[];
    readonly timeoutMs: number;
    readonly token: InternalTokenSource;
    readonly onReplicaChange?: MemoryClientOptions['onReplicaChange'];
  }): MemoryClient {
    const replicas = options.replicas.map(({ host, port }) => ({
      address: `${host.includes(':') ? `[${host}]` : host}:${port}`,
      proxy: ClientProxyFactory.create({ transport: Transport.TCP, options: { host, port } }),
    }));
    return new MemoryClient(replicas, {
      defaultTimeoutMs: options.timeoutMs,
      token: options.token,
      ...(options.onReplicaChange ? { onReplicaChange: options.onReplicaChange } : {}),
    });
  }

  async call<P extends keyof MemoryContract>(
    pattern: P,
    request: MemoryContract[P][0],
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<MemoryContract[P][1]> {
    const pool = (request as { pool?: unknown }).pool;
    let last: MemoryError | undefined;
    for (const replica of this.replicas.order(typeof pool === 'string' ? pool : '')) {
      const outcome = await this.callOne(replica, pattern, request, timeoutMs);
      if (outcome.ok) return outcome.value;
      last = outcome.error;
      if (outcome.failure === 'answered' || outcome.failure === 'timeout') throw outcome.error;
      if (outcome.failure === 'broken' && !repeatableAfterBrokenCall(pattern, request)) throw outcome.error;
    }
    throw last!;
  }

  /** Every replica's state, each pinged now (for /readyz). */
  async readiness(timeoutMs: number): Promise<ReplicaReadiness[]> {
    const pings = await Promise.all(
      this.replicas.all().map(async (replica) => [replica.address, await this.callOne(replica, MemoryPattern.Ping, {}, timeoutMs)] as const),
    );
    const answers = new Map(pings);
    return this.replicas.health().map((health) => {
      const outcome = answers.get(health.address)!;
      const answer = outcome.ok ? outcome.value : null;
      return {
        ...health,
        ping: answer === null ? 'down' : answer.diskFull ? 'read-only' : 'up',
        lastSeq: answer?.lastSeq ?? null,
        diskFull: answer?.diskFull ?? null,
        ...(outcome.ok || health.error !== null ? {} : { error: outcome.error.message }),
      };
    });
  }

  close(): Promise<void> {
    clearInterval(this.probe);
    return Promise.all(this.replicas.all().map(({ proxy }) => proxy.close() as Promise<void> | void)).then(() => undefined);
  }

  private async callOne<P extends keyof MemoryContract>(
    replica: MemoryReplica,
    pattern: P,
    request: MemoryContract[P][0],
    timeoutMs: number,
  ): Promise<{ ok: true; value: MemoryContract[P][1] } | { ok: false; failure: CallFailure; error: MemoryError }> {
    try {
      // Connected first, under a deadline of its own: a call never sent may go to another replica.
      await this.connect(replica, Math.min(CONNECT_TIMEOUT_MS, timeoutMs / 2));
      const value = await firstValueFrom(replica.proxy.send<MemoryContract[P][1]>(pattern, request).pipe(timeout(timeoutMs)));
      this.answered(replica);
      return { ok: true, value };
    } catch (error) {
      const failure = failureOf(error);
      const memoryError = toMemoryError(error, pattern, timeoutMs, this.replicas.size > 1 ? replica.address : null);
      if (failure === 'answered') {
        this.answered(replica);
        if (memoryError.code === 'unauthorized') this.token?.refused();
      } else if (failure === 'not-sent' || failure === 'broken') {
        if (this.replicas.failed(replica, memoryError.message)) {
          this.options.onReplicaChange?.({ address: replica.address, state: 'down', error: memoryError.message });
        }
      }
      return { ok: false, failure, error: memoryError };
    }
  }

  /**
   * A stopped container's name may take long to fail to resolve, and a lost machine's address answers
   * nothing: without a connection in time the socket is dropped (the next try resolves the name again).
   */
  private async connect(replica: MemoryReplica, timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    try {
      const outcome = await Promise.race([replica.proxy.connect(), late]);
      if (outcome !== 'late') return;
    } finally {
      clearTimeout(timer);
    }
    await Promise.resolve(replica.proxy.close()).catch(() => undefined);
    throw new NotConnectedError(`no connection within ${Math.round(timeoutMs)} ms`);
  }

  private answered(replica: MemoryReplica): void {
    if (this.replicas.answered(replica)) this.options.onReplicaChange?.({ address: replica.address, state: 'up' });
  }

  private async probeDown(): Promise<void> {
    await Promise.all(this.replicas.down().map((replica) => this.callOne(replica, MemoryPattern.Ping, {}, PROBE_TIMEOUT_MS)));
  }
}

function failureOf(error: unknown): CallFailure {
  if (error instanceof NotConnectedError) return 'not-sent';
  if (error instanceof MemoryError || MemoryError.isBody(error)) return 'answered';
  if (error instanceof TimeoutError) return 'timeout';
  // Neither an answer nor a known transport failure (a frame it could not read, say): not sent elsewhere.
  return transportFailureOf(error) ?? 'answered';
}

function toMemoryError(error: unknown, pattern: string, timeoutMs: number, address: string | null): MemoryError {
  if (error instanceof MemoryError) return error;
  const at = address === null ? '' : ` at ${address}`;
  if (error instanceof TimeoutError) {
    return new MemoryError('unavailable', `memory service${at} did not answer ${pattern} within ${timeoutMs} ms`);
  }
  if (MemoryError.isBody(error)) return new MemoryError(error.code, error.message);
  const message = error instanceof Error ? error.message : JSON.stringify(error);
  return new MemoryError(error instanceof NotConnectedError || transportFailureOf(error) ? 'unavailable' : 'internal', `memory service${at} ${pattern}: ${message}`);
}
