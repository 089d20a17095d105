/** Error codes the memory service answers with; callers map them to HTTP statuses and tool messages. */
export const MEMORY_ERROR_CODES = [
  'not_found',
  'invalid_request',
  'conflict',
  // A store's idempotency key came again with a different request (see StoreRequest.idempotencyKeyBindsRequest).
  'idempotency_key_reused',
  // What the write would store a purge forbids: the id it purged, or (from a conversation) its text.
  'gone',
  'unavailable',
  'unauthorized',
  'internal',
] as const;
export type MemoryErrorCode = (typeof MEMORY_ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(MEMORY_ERROR_CODES);

export interface MemoryErrorBody {
  readonly code: MemoryErrorCode;
  readonly message: string;
}

/** Thrown by MemoryClient when the service answered with an error, or did not answer in time. */
export class MemoryError extends Error {
  constructor(
    readonly code: MemoryErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'MemoryError';
  }

  /**
   * An error body the service sent. A Node socket error (`{code:'ECONNREFUSED', message}`) has
   * the same two string fields: only a code of the contract makes a body.
   */
  static isBody(value: unknown): value is MemoryErrorBody {
    return (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as MemoryErrorBody).code === 'string' &&
      KNOWN_CODES.has((value as MemoryErrorBody).code) &&
      typeof (value as MemoryErrorBody).message === 'string'
    );
  }
}
