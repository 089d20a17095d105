/** Error codes the memory service answers with; callers map them to HTTP statuses and tool messages. */
export type MemoryErrorCode = 'not_found' | 'invalid_request' | 'conflict' | 'unavailable' | 'internal';

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

  static isBody(value: unknown): value is MemoryErrorBody {
    return (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as MemoryErrorBody).code === 'string' &&
      typeof (value as MemoryErrorBody).message === 'string'
    );
  }
}
