import type { MemoryClient } from '@engram/contracts';
import type { ExtractExchangeData } from '@engram/jobs';

/** The part of MemoryClient the engine uses; tests pass a typed fake. */
export type MemoryPort = Pick<MemoryClient, 'call'>;

/** An upstream answer: status, headers, and the body as it streams in. */
export interface UpstreamReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: AsyncIterable<Uint8Array>;
}

/** Sends one request body upstream (auth, base URL, timeouts are the port's business). */
export interface UpstreamPort {
  post(path: string, body: string | Uint8Array, signal: AbortSignal): Promise<UpstreamReply>;
}

/** Where a client response goes. `write` resolves once the client has taken the bytes (back-pressure). */
export interface ClientSink {
  /** A whole response at once (non-stream answers and errors). */
  respond(status: number, headers: Readonly<Record<string, string>>, body: string | Uint8Array): void;
  startStream(status: number, headers: Readonly<Record<string, string>>): void;
  write(chunk: string | Uint8Array): Promise<void>;
  end(): void;
  /** Cuts the connection mid-body, so the client sees a broken response rather than a truncated one. */
  abort(): void;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  readonly started: boolean;
}

/** Hands an exchange with memory suggestions to the worker; never throws, never waits on the request path. */
export interface ExtractionPort {
  enqueue(data: ExtractExchangeData): void;
}

/** Told when the model changed a pool's memory, so a cached Tier 1 block is dropped at once. */
export interface Tier1Invalidation {
  evict(pool: string): void;
}
