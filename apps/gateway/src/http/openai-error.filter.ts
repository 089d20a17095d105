import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { EngramHttpError } from '@engram/gateway-engine';
import type { Logger } from '@engram/observability';
import type { FastifyReply } from 'fastify';

/** Every error a controller lets through leaves as OpenAI-shaped JSON; an unexpected one is a logged 500, never a crash. */
@Catch()
export class OpenAiErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = toHttpError(exception);
    if (error.status >= 500) this.logger.error({ err: exception instanceof Error ? exception.stack : String(exception) }, 'request failed');
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.destroy();
      return;
    }
    void reply.status(error.status).header('content-type', 'application/json').send(JSON.stringify(error.body()));
  }
}

export function toHttpError(exception: unknown): EngramHttpError {
  if (exception instanceof EngramHttpError) return exception;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return new EngramHttpError(
      status,
      exception.message,
      status < 500 ? 'invalid_request_error' : 'server_error',
      status === 404 ? 'not_found' : `http_${status}`,
    );
  }
  const statusCode = (exception as { statusCode?: unknown }).statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    const code = (exception as { code?: unknown }).code;
    return new EngramHttpError(
      statusCode,
      (exception as Error).message,
      'invalid_request_error',
      typeof code === 'string' ? code.toLowerCase() : `http_${statusCode}`,
    );
  }
  return new EngramHttpError(500, 'internal error', 'server_error', 'internal_error');
}
