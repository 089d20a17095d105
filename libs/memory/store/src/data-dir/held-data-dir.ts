import type { EncryptionKey } from '@engram/config';
import { DataDir } from './data-dir.js';
import { assertKeyFitsDataDir } from './data-dir-encryption.js';
import { DataDirLock } from './data-dir-lock.js';

/**
 * Runs `work` as the data dir's one writer, with `key`: the key is checked before the lock is taken,
 * whose file is the first thing written (a refused key changes nothing in the data dir), and again once
 * it is held (an `engram encrypt` may have finished in between). The lock is released when `work` ends.
 */
export async function withDataDirHeld<T>(root: string, key: EncryptionKey | null, work: (dataDir: DataDir) => Promise<T>): Promise<T> {
  const dataDir = new DataDir(root);
  assertKeyFitsDataDir(root, key);
  const lock = DataDirLock.acquire(dataDir.lockPath);
  try {
    assertKeyFitsDataDir(root, key);
    return await work(dataDir);
  } finally {
    lock.release();
  }
}
