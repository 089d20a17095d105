import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ClientSink } from '@engram/gateway-engine';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpSink } from './http-sink.js';

/** A client's request once its body is in: what a service reads of it, and the sink every byte of the answer goes through. */
export interface ClientCall {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The body's raw bytes, as the client sent them (empty when it sent none). */
  readonly body: Buffer;
  readonly sink: ClientSink;
  /** Called once the answer has gone out, with its status. */
  onFinished(listener: (status: number) => void): void;
}

const NO_BODY = Buffer.alloc(0);

/** Hijacks the reply: from here on the service answers through an HttpSink over Node's response, not through Fastify. */
export function takeOver(request: FastifyRequest, reply: FastifyReply): ClientCall {
  void reply.hijack();
  return callOver(request.raw, reply.raw, request.id, Buffer.isBuffer(request.body) ? request.body : NO_BODY);
}

/** A call over Node's own request and response (read to its end: `body`), answered through an HttpSink. */
export function callOver(request: IncomingMessage, response: ServerResponse, id: string, body: Buffer): ClientCall {
  return {
    id,
    method: request.method ?? '',
    url: request.url ?? '',
    headers: request.headers,
    body,
    sink: new HttpSink(response, id),
    // 'finish' comes at most once.
    onFinished: (listener) => response.on('finish', () => listener(response.statusCode)),
  };
}
