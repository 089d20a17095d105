import type { EventEmitter } from 'node:events';
import type { MemoryClient } from '@engram/contracts';
import type { ExtractExchangeData } from '@engram/jobs';

/** The part of MemoryClient the engine uses; tests pass a typed fake. */
export type MemoryPort = Pick<MemoryClient, 'call'>;

/** An upstream answer: status, headers, and the body as it streams in. */
export interface UpstreamReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: AsyncIterable<Uint8Array>;
  /** The whole body at once, when the port can read it so for less than iterating `body` (one or the other, never both). */
  readonly bytes?: () => Promise<Uint8Array>;
}

/**
 * Aborts when the client goes away: an AbortSignal, or an EventEmitter that emits 'abort' once and
 * then says `aborted` (undici takes either; the gateway makes one per request, and an EventEmitter
 * costs a fraction of an AbortController to make and to listen to).
 */
export type ClientSignal = AbortSignal | (EventEmitter & { readonly aborted: boolean });

/** Sends one request body upstream (auth, base URL, timeouts are the port's business). */
export interface UpstreamPort {
  post(path: string, body: string | Uint8Array, signal: ClientSignal): Promise<UpstreamReply>;
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
  readonly signal: ClientSignal;
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
