import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const MEMORY_ID_LENGTH = 10;
/** Ids a caller may choose (idempotent store): url-safe, short enough to cite. */
export const CALLER_ID_PATTERN = /^[A-Za-z0-9_-]{4,64}$/;

/** A short random id, lowercase letters and digits (~51 bits): easy for a model to cite back. */
export function newMemoryId(): string {
  let id = '';
  while (id.length < MEMORY_ID_LENGTH) {
    for (const byte of randomBytes(MEMORY_ID_LENGTH * 2)) {
      // 252 = 7 × 36: rejecting the bytes above it keeps every character equally likely.
      if (byte < 252 && id.length < MEMORY_ID_LENGTH) id += ALPHABET[byte % 36];
    }
  }
  return id;
}

export function newEventId(): string {
  return randomUUID();
}
