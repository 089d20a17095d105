import { join } from 'node:path';
import { isValidPoolName } from '@engram/domain';

/** Where everything lives under $ENGRAM_DATA_DIR. A pool name becomes a path only after validation. */
export class DataDir {
  constructor(readonly root: string) {}

  get eventsDir(): string {
    return join(this.root, 'events');
  }
  get databasePath(): string {
    return join(this.root, 'engram.db');
  }
  /** Embeddings keyed by content hash and model: kept across `engram replay`, which rebuilds only engram.db. */
  get vectorsPath(): string {
    return join(this.root, 'vectors.db');
  }
  get lockPath(): string {
    return join(this.root, 'engram.lock');
  }
  get poolsDir(): string {
    return join(this.root, 'pools');
  }
  poolDir(pool: string): string {
    if (!isValidPoolName(pool)) throw new Error(`invalid pool name ${JSON.stringify(pool)}`);
    return join(this.poolsDir, pool);
  }
}
