import type { ClientSink } from '../ports.js';

/** Records what the engine writes to the client. */
export class RecordingSink implements ClientSink {
  status = 0;
  body = '';
  started = false;
  ended = false;
  readonly signal = new AbortController().signal;
  respond(status: number, _headers: Readonly<Record<string, string>>, body: string | Uint8Array): void {
    this.status = status;
    this.body = typeof body === 'string' ? body : new TextDecoder().decode(body);
    this.started = true;
  }
  startStream(status: number): void {
    this.status = status;
    this.started = true;
  }
  write(chunk: string | Uint8Array): Promise<void> {
    this.body += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
    return Promise.resolve();
  }
  end(): void {
    this.ended = true;
  }
  abort(): void {
    this.ended = true;
  }
}
