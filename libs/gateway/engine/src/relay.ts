import { EngramHttpError, internalError, openAiErrorBody } from './errors.js';
import type { ClientSink, UpstreamReply } from './ports.js';
import { readAll } from './read-all.js';

/**
 * Pass-through without memory: the upstream's status, headers and body bytes reach the client
 * as they arrive, chunk by chunk, with back-pressure. Used for `x-engram-memory: off`, when
 * memory is unavailable, and for endpoints Engram does not own (`GET /v1/models`).
 */
export interface RelayOptions {
  readonly onError?: (kind: 'upstream' | 'client_abort' | 'internal') => void;
  /** The format's error body (`WireAdapter.errorBody`); default `openAiErrorBody`. */
  readonly errorBody?: (error: EngramHttpError) => unknown;
  /** Told about a failure that is not the upstream's (a bug), so it can be logged with its stack. */
  readonly onInternalError?: (error: unknown) => void;
}

export async function relay(send: () => Promise<UpstreamReply>, sink: ClientSink, options: RelayOptions = {}): Promise<void> {
  const onError = options.onError;
  try {
    const reply = await send();
    if (!reply.headers['content-type']?.includes('text/event-stream')) {
      // A whole JSON answer: one write with its length, not a chunked body.
      sink.respond(reply.status, reply.headers, await readAll(reply));
      return;
    }
    sink.startStream(reply.status, reply.headers);
    for await (const chunk of reply.body) await sink.write(chunk);
    sink.end();
  } catch (error) {
    if (sink.signal.aborted) {
      onError?.('client_abort');
      return;
    }
    // The upstream port reports its failures as EngramHttpErrors (502/504); anything else is Engram's own.
    const failure = error instanceof EngramHttpError ? error : internalError();
    onError?.(error instanceof EngramHttpError ? 'upstream' : 'internal');
    options.onInternalError?.(error);
    const body = (options.errorBody ?? openAiErrorBody)(failure);
    if (!sink.started) sink.respond(failure.status, { 'content-type': 'application/json' }, JSON.stringify(body));
    else sink.abort();
  }
}
