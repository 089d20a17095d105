import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemoryEntry, MemoryType } from '@engram/domain';
import type { DataDir } from './data-dir.js';
import { FLAT_FILES, parseFlatFile, renderFlatFile, type FlatEntry } from './flat-file-format.js';

interface PoolRender {
  running: Promise<void> | null;
  next: Promise<void> | null;
}

/**
 * `pools/<pool>/MEMORY.md` and `USER.md`, rewritten atomically (temp + rename) from the projection.
 * Renders of one pool are coalesced: a request made while a render runs waits for the one render
 * that starts after it, so a burst of writes costs two renders, not one per write.
 */
export class FlatFiles {
  private readonly renders = new Map<string, PoolRender>();

  constructor(
    private readonly dataDir: DataDir,
    private readonly activeEntries: (pool: string) => readonly MemoryEntry[],
  ) {}

  /** Resolves once the files reflect at least the state at the time of the call. */
  refresh(pool: string): Promise<void> {
    const state = this.renders.get(pool) ?? { running: null, next: null };
    this.renders.set(pool, state);
    if (!state.running) {
      state.running = this.render(pool).finally(() => {
        state.running = null;
      });
      return state.running;
    }
    state.next ??= state.running.then(() => {
      state.next = null;
      return this.refresh(pool);
    });
    return state.next;
  }

  /** Reads what the files of a pool hold (for import-flat). Missing files count as empty. */
  read(pool: string): Record<MemoryType, { entries: FlatEntry[]; skipped: string[] }> {
    const dir = this.dataDir.poolDir(pool);
    const load = (type: MemoryType) => {
      const path = join(dir, FLAT_FILES[type]);
      return existsSync(path) ? parseFlatFile(readFileSync(path, 'utf8')) : { entries: [], skipped: [] };
    };
    return { USER: load('USER'), MEMORY: load('MEMORY') };
  }

  private async render(pool: string): Promise<void> {
    const entries = this.activeEntries(pool);
    const dir = this.dataDir.poolDir(pool);
    mkdirSync(dir, { recursive: true });
    for (const type of ['MEMORY', 'USER'] as const) {
      const path = join(dir, FLAT_FILES[type]);
      const temp = `${path}.tmp-${process.pid}`;
      await writeFile(temp, renderFlatFile(pool, type, entries.filter((entry) => entry.type === type)));
      await rename(temp, path);
    }
  }
}
