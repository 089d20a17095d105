/**
 * A write failed because the data dir's file system is full (or the user's quota is): the error
 * clears itself once space is freed, unlike a failing disk. Node's fs says ENOSPC or EDQUOT; SQLite
 * (better-sqlite3) says SQLITE_FULL, or SQLITE_IOERR_SHMSIZE when it cannot size a WAL index file.
 */
export function isOutOfSpace(error: unknown): boolean {
  if (error instanceof AppendRolledBack) return true;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_SHMSIZE';
}

/** The log could not take a batch for want of space, and is back as it was before it: the batch was not stored. */
export class AppendRolledBack extends Error {
  constructor(readonly reason: Error) {
    super(`the event log could not take the write (${messageOf(reason)}) and stored none of it`);
    this.name = 'AppendRolledBack';
  }
}

/** An error's message, also for errors from another realm (a vm context) or thrown values that are not errors. */
export function messageOf(error: unknown): string {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(error);
}
