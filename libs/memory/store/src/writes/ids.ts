import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const MEMORY_ID_LENGTH = 10;

/** A short random id, lowercase letters and digits (~51 bits): easy for a model to cite back. */
export function newMemoryId(): string {
  let id = '';
  while (id.length < MEMORY_ID_LENGTH) {
    const byte = randomByte();
    // 252 = 7 × 36: rejecting the bytes above it keeps every character equally likely.
    if (byte < 252) id += ALPHABET[byte % 36];
  }
  return id;
}

// Entropy fetched in blocks: one getrandom call per ~400 ids instead of one per id.
let pool = Buffer.alloc(0);
let offset = 0;
function randomByte(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  return pool[offset++] ?? 0;
}

export function newEventId(): string {
  return randomUUID();
}
