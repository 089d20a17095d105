import type { PageSort } from '@engram/contracts';
import { invalid } from '../writes/validation.js';

/**
 * Where a page ended: the sort key and rowid of its last row, and, for the confidence sort, the
 * moment decay was computed at, so every page of one listing ranks by the same clock.
 */
export interface PagePosition {
  readonly sort: PageSort;
  readonly key: string | number;
  readonly rowid: number;
  /** Julian day the first page was computed at. */
  readonly today: number;
}

/** Opaque to callers: base64url of the position. */
export function encodeCursor(position: PagePosition): string {
  return Buffer.from(JSON.stringify([position.sort, position.key, position.rowid, position.today])).toString('base64url');
}

/** The position of a cursor made for `sort`; a malformed cursor, or one from another sort, is the caller's mistake. */
export function decodeCursor(cursor: unknown, sort: PageSort): PagePosition {
  if (typeof cursor !== 'string' || cursor.length > 512) throw invalid('cursor must be a nextCursor this listing returned');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('cursor must be a nextCursor this listing returned');
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw invalid('cursor must be a nextCursor this listing returned');
  const [cursorSort, key, rowid, today] = parsed as unknown[];
  if (cursorSort !== sort) throw invalid(`cursor belongs to a listing sorted by ${String(cursorSort)}, not ${sort}`);
  const keyOk = sort === 'confidence' ? typeof key === 'number' && Number.isFinite(key) : typeof key === 'string' && key.length <= 64;
  if (!keyOk || typeof rowid !== 'number' || !Number.isSafeInteger(rowid) || typeof today !== 'number' || !Number.isFinite(today)) {
    throw invalid('cursor must be a nextCursor this listing returned');
  }
  return { sort, key: key as string | number, rowid, today };
}
