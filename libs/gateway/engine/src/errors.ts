/** An error shaped for the client: an HTTP status and OpenAI's `{"error":{"message","type","code"}}`. */
export class EngramHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'EngramHttpError';
  }

  body(): { error: { message: string; type: string; code: string } } {
    return { error: { message: this.message, type: this.type, code: this.code } };
  }
}

/** The caller's mistake: a 4xx. */
export function clientError(status: number, message: string, code: string): EngramHttpError {
  return new EngramHttpError(
    status,
    message,
    status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : 'invalid_request_error',
    code,
  );
}

/** Engram's own failure: a 500, never dressed up as the upstream's. */
export function internalError(): EngramHttpError {
  return new EngramHttpError(500, 'internal error', 'server_error', 'internal_error');
}

/** The upstream's failure: 502, or 504 when it did not answer in time. */
export function upstreamError(status: 502 | 504, message: string): EngramHttpError {
  return new EngramHttpError(status, message, 'upstream_error', status === 504 ? 'upstream_timeout' : 'upstream_unavailable');
}

/** The error body of the OpenAI-shaped surfaces, and the default of every other: `{"error":{"message","type","code"}}`. */
export function openAiErrorBody(error: EngramHttpError): unknown {
  return error.body();
}
