import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Databases start-up moved aside because they failed to open or their integrity check
 * (`engram.db.corrupt-<time>`, with their -wal and -shm). They hold every entry as it was, purged
 * ones included, and nothing reads them: a purge deletes them, so the purge reaches every copy
 * Engram made (backups are the documented exception).
 */
export function removeMovedAsideDatabases(databasePath: string): string[] {
  const dir = dirname(databasePath);
  const prefix = `${basename(databasePath)}.corrupt-`;
  const removed = readdirSync(dir).filter((name) => name.startsWith(prefix));
  for (const name of removed) rmSync(join(dir, name), { force: true });
  return removed;
}
