import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { ClientSink } from '@engram/gateway-engine';

const WRITTEN = Promise.resolve();

/**
 * A client response over Node's ServerResponse (the reply is hijacked from Fastify): writes
 * wait for 'drain' when the socket's buffer is full, so a slow client slows the upstream read
 * instead of filling memory, and `signal` aborts when the client goes away before the end.
 */
export class HttpSink implements ClientSink {
  readonly signal = new ClientGone();
  started = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly requestId: string,
  ) {
    // `on`, not `once`: 'close' comes once, and a once-wrapper per request is garbage.
    response.on('close', () => {
      if (!response.writableFinished) this.signal.abort();
    });
  }

  respond(status: number, headers: Readonly<Record<string, string>>, body: string | Uint8Array): void {
    if (this.response.headersSent) {
      this.response.end();
      return;
    }
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    this.response.writeHead(status, { ...headers, 'content-length': String(length), 'x-request-id': this.requestId });
    this.response.end(body);
  }

  startStream(status: number, headers: Readonly<Record<string, string>>): void {
    this.started = true;
    this.response.writeHead(status, { ...headers, 'x-request-id': this.requestId });
    // An event stream shows its start at once; any other body leaves with its first bytes (one packet, one wake-up).
    if (headers['content-type']?.includes('text/event-stream')) this.response.flushHeaders();
  }

  write(chunk: string | Uint8Array): Promise<void> {
    if (chunk.length === 0 || this.response.destroyed) return WRITTEN;
    if (this.response.write(chunk)) return WRITTEN;
    return new Promise((resolve) => {
      const done = (): void => {
        this.response.off('drain', done);
        this.response.off('close', done);
        resolve();
      };
      this.response.once('drain', done);
      this.response.once('close', done);
    });
  }

  abort(): void {
    this.response.destroy();
  }

  end(): void {
    if (!this.response.writableEnded) this.response.end();
  }
}

/** The sink's signal: emits 'abort' once, when the client went away before the end of its answer. */
class ClientGone extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}
