import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writevSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { type EncryptionKey, openFile, PiecesSealer } from '@engram/config';
import { MEMORY_TYPES, type MemoryEntry, type MemoryType } from '@engram/domain';
import type { DataDir } from '../data-dir/data-dir.js';
import { FLAT_FILES, FLAT_SEPARATOR_LINE, flatFileParts, parseFlatFile, renderFlatBlock, type FlatEntry } from './flat-file-format.js';
import type { EntryChange } from '../projection/projection.js';

/** A file's body is kept as at most this many chunks (one per render), then joined into one. */
const MAX_BODY_CHUNKS = 256;

interface TypeBlocks {
  /** id -> rendered block, in file order: creation time, then insertion (the database's rowid). */
  readonly blocks: Map<string, string>;
  lastCreatedAt: string;
  dirty: boolean;
  /** The blocks joined and encoded, in chunks kept between renders; null = join again. */
  body: Buffer[] | null;
  /** Blocks appended since the last render, each prefixed with the separator when it needs one. */
  appended: string[];
}

interface PoolFiles {
  /** null until first rendered, or after a change that cannot be placed in order (then reloaded). */
  types: Record<MemoryType, TypeBlocks> | null;
  /** Counts changes noted; a render covers the changes counted when it started. */
  version: number;
  running: { readonly version: number; readonly done: Promise<void> } | null;
  next: Promise<void> | null;
}

/**
 * `pools/<pool>/MEMORY.md` and `USER.md`, rewritten atomically (temp + rename) after each change.
 * Each pool's rendered blocks are kept in memory and patched from the applied changes, so a render
 * never re-reads the pool and a file whose entries did not change is not rewritten. Renders of one
 * pool are coalesced: a request made while a render runs waits for the one render that starts
 * after it, so a burst of writes costs two renders, not one per write. With an at-rest key each file
 * is sealed in pieces, one per chunk of its body (sealed-pieces.ts in @engram/config), its place in the
 * data dir as associated data: a render seals the chunks appended since the last one, not the whole file.
 */
export class FlatFiles {
  private readonly pools = new Map<string, PoolFiles>();
  private readonly madeDirs = new Set<string>();
  /** With a key, each file's sealer: it keeps the sealed pieces of the body, so a render seals only what was appended. */
  private readonly sealers = new Map<string, PiecesSealer>();

  constructor(
    private readonly dataDir: DataDir,
    private readonly activeEntries: (pool: string) => readonly MemoryEntry[],
    private readonly key: EncryptionKey | null = null,
  ) {}

  /** Patches the in-memory blocks with changes just applied to the database. */
  noteChanges(changes: readonly EntryChange[]): void {
    for (const { before, after } of changes) {
      const pool = this.pools.get((after ?? before)?.pool ?? '');
      if (!pool) continue;
      pool.version += 1;
      if (!pool.types) continue;
      const types = pool.types;
      const wasActive = before && !before.isArchived ? before : undefined;
      const isActive = after && !after.isArchived ? after : undefined;
      if (wasActive && isActive && wasActive.type === isActive.type) {
        const target = types[isActive.type];
        const block = renderFlatBlock(isActive);
        if (target.blocks.get(isActive.id) !== block) {
          target.blocks.set(isActive.id, block);
          target.dirty = true;
          target.body = null;
          target.appended = [];
        }
        continue;
      }
      if (wasActive) {
        types[wasActive.type].blocks.delete(wasActive.id);
        types[wasActive.type].dirty = true;
        types[wasActive.type].body = null;
        types[wasActive.type].appended = [];
      }
      if (isActive) {
        const target = types[isActive.type];
        if (before || isActive.createdAt < target.lastCreatedAt) {
          pool.types = null; // restored or retyped: its place is in the middle; reload in order.
          continue;
        }
        const block = renderFlatBlock(isActive);
        target.blocks.set(isActive.id, block);
        target.lastCreatedAt = isActive.createdAt;
        target.dirty = true;
        if (target.body !== null) {
          const first = target.appended.length === 0 && target.body.every((chunk) => chunk.length === 0);
          target.appended.push(first ? block : FLAT_SEPARATOR_LINE + block);
        }
      }
    }
  }

  /** Resolves once the files reflect at least the state at the time of the call. */
  refresh(pool: string): Promise<void> {
    const state = this.poolFiles(pool);
    if (!state.running) {
      const done = this.render(pool, state).finally(() => {
        state.running = null;
      });
      state.running = { version: state.version, done };
      return done;
    }
    // A render that started after our change covers it (all callers of one commit batch share one).
    if (state.running.version >= state.version) return state.running.done;
    state.next ??= state.running.done.then(() => {
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
      return existsSync(path)
        ? parseFlatFile(openFile(readFileSync(path), this.key, place(pool, type)).toString('utf8'))
        : { entries: [], skipped: [] };
    };
    return { USER: load('USER'), MEMORY: load('MEMORY') };
  }

  private poolFiles(pool: string): PoolFiles {
    let state = this.pools.get(pool);
    if (!state) {
      state = { types: null, version: 0, running: null, next: null };
      this.pools.set(pool, state);
    }
    return state;
  }

  /**
   * The write is synchronous (into the page cache, cheaper than async fs's promise machinery); the
   * rename is not: on ext4 replacing a file by rename starts writeback of the new one and frees the
   * old one, which is the slow part, so it runs on libuv's pool.
   */
  private async render(pool: string, state: PoolFiles): Promise<void> {
    await Promise.resolve();
    const types = (state.types ??= this.load(pool));
    const dir = this.dataDir.poolDir(pool);
    if (!this.madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      // Temp files of a process that died between write and rename.
      for (const name of readdirSync(dir)) if (name.includes('.md.tmp-')) rmSync(join(dir, name), { force: true });
      this.madeDirs.add(dir);
    }
    const renames: Promise<void>[] = [];
    for (const type of MEMORY_TYPES) {
      const blocks = types[type];
      if (!blocks.dirty) continue;
      blocks.dirty = false;
      const path = join(dir, FLAT_FILES[type]);
      const temp = `${path}.tmp-${process.pid}`;
      // New blocks become one more chunk of the cached body: no re-join, re-encoding or copy of the rest.
      if (blocks.body === null) blocks.body = [Buffer.from([...blocks.blocks.values()].join(FLAT_SEPARATOR_LINE))];
      else if (blocks.appended.length > 0) blocks.body.push(Buffer.from(blocks.appended.join('')));
      blocks.appended = [];
      if (blocks.body.length > MAX_BODY_CHUNKS) blocks.body = [Buffer.concat(blocks.body)];
      const parts = flatFileParts(pool, type, blocks.body);
      try {
        writeParts(temp, this.key ? this.sealerOf(pool, type, this.key).seal(parts) : parts);
      } catch (error) {
        // A half-written temp file (ENOSPC) would hold on to its space; the next render starts over from the database.
        rmSync(temp, { force: true });
        state.types = null;
        throw error;
      }
      renames.push(rename(temp, path));
    }
    try {
      await Promise.all(renames);
    } catch (error) {
      state.types = null;
      throw error;
    }
  }

  private sealerOf(pool: string, type: MemoryType, key: EncryptionKey): PiecesSealer {
    const at = place(pool, type);
    let sealer = this.sealers.get(at);
    if (!sealer) {
      sealer = new PiecesSealer(key, at);
      this.sealers.set(at, sealer);
    }
    return sealer;
  }

  private load(pool: string): Record<MemoryType, TypeBlocks> {
    const types: Record<MemoryType, TypeBlocks> = {
      USER: { blocks: new Map(), lastCreatedAt: '', dirty: true, body: null, appended: [] },
      MEMORY: { blocks: new Map(), lastCreatedAt: '', dirty: true, body: null, appended: [] },
    };
    for (const entry of this.activeEntries(pool)) {
      const target = types[entry.type];
      target.blocks.set(entry.id, renderFlatBlock(entry));
      target.lastCreatedAt = entry.createdAt;
    }
    return types;
  }
}

/** A flat file's path in the data dir: what its sealed bytes are bound to. */
function place(pool: string, type: MemoryType): string {
  return `pools/${pool}/${FLAT_FILES[type]}`;
}

/** Writes the parts in order, each completely, in as few system calls as the kernel allows. */
function writeParts(path: string, parts: readonly Buffer[]): void {
  const fd = openSync(path, 'w');
  try {
    let pending = parts.filter((part) => part.length > 0);
    while (pending.length > 0) {
      // writev takes at most IOV_MAX (1024) buffers per call; a regular file rarely takes less than all.
      let written = writevSync(fd, pending.slice(0, 1024));
      let done = 0;
      while (done < pending.length && written >= (pending[done]?.length ?? 0)) written -= pending[done++]?.length ?? 0;
      pending = pending.slice(done);
      if (written > 0 && pending[0]) pending[0] = pending[0].subarray(written);
    }
  } finally {
    closeSync(fd);
  }
}
