import { DAY_MS } from '@engram/domain';

/** Julian day number of a time, as SQLite's julianday() gives it. */
export function julianDay(time: Date): number {
  return time.getTime() / DAY_MS + 2_440_587.5;
}
