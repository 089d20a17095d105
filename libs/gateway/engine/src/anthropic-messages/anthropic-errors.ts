import { sseEvent } from '../sse.js';

/** Anthropic's error type for an HTTP status (https://docs.anthropic.com/en/api/errors). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}

/** `{"type":"error","error":{"type","message"}}`, the body and the stream `error` event alike. */
export function anthropicErrorBody(status: number, message: string): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type: anthropicErrorType(status), message } };
}

/**
 * The stream's terminal `error` event. `message` may be an upstream error body that is already
 * Anthropic-shaped (a later round failed after the stream began): its error is kept as it is.
 */
export function anthropicErrorEvent(status: number, message: string): string {
  let body: unknown = anthropicErrorBody(status, message);
  try {
    const parsed = JSON.parse(message) as { type?: unknown; error?: { type?: unknown; message?: unknown } };
    if (typeof parsed.error?.type === 'string' && typeof parsed.error.message === 'string') {
      body = { type: 'error', error: { type: parsed.error.type, message: parsed.error.message } };
    }
  } catch {
    // Not JSON: a plain message.
  }
  return sseEvent('error', body);
}
