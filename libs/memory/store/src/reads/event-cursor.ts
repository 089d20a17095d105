import { invalid } from '../writes/validation.js';

/**
 * The `nextCursor` of an events page: opaque to callers (base64url), so what it holds can change.
 * Today it is the last seq the page returned, tagged so that a cursor of another listing is refused.
 */
const TAG = 'ev1:';

export function encodeEventCursor(lastSeq: number): string {
  return Buffer.from(`${TAG}${lastSeq}`, 'utf8').toString('base64url');
}

/** The seq a cursor continues after; an invalid_request error for anything this module did not make. */
export function decodeEventCursor(cursor: unknown): number {
  if (typeof cursor !== 'string' || cursor === '' || cursor.length > 64 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw badCursor();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(TAG)) throw badCursor();
  const digits = text.slice(TAG.length);
  if (!/^\d{1,15}$/.test(digits)) throw badCursor();
  return Number(digits);
}

function badCursor() {
  return invalid('cursor is not one this listing gave out');
}
