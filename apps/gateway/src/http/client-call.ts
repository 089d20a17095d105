import type { IncomingHttpHeaders } from 'node:http';
import type { ClientSink } from '@engram/gateway-engine';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpSink } from './http-sink.js';

/** A client's request once taken over from Fastify: what a service reads of it, and the sink every byte of the answer goes through. */
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
  return {
    id: request.id,
    method: request.method,
    url: request.url,
    headers: request.headers,
    body: Buffer.isBuffer(request.body) ? request.body : NO_BODY,
    sink: new HttpSink(reply.raw, request.id),
    onFinished: (listener) => reply.raw.once('finish', () => listener(reply.raw.statusCode)),
  };
}
