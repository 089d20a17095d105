import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A real file system of a few MiB that a test fills up and frees again (a tmpfs). */
export interface SmallDisk {
  /** Where it is mounted: an empty folder at first. */
  readonly path: string;
  /** Writes a filler file until the file system says ENOSPC; returns the bytes it took. */
  fill(): number;
  /** Deletes the filler: the space is back. */
  free(): void;
  /** Unmounts it and removes the mount point (whatever is on it goes). */
  remove(): void;
}

/**
 * Mounts a tmpfs of `bytes` on a new folder. Mounting needs root (CAP_SYS_ADMIN), as the tests of a
 * full disk run here and in the image's test stage; anywhere else the test fails saying so.
 */
export function smallDisk(bytes = 2 * 1024 * 1024): SmallDisk {
  const path = mkdtempSync(join(tmpdir(), 'engram-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    throw new Error(`a full-disk test mounts a ${bytes}-byte tmpfs, which needs root: ${(error as Error).message}`);
  }
  const filler = join(path, 'filler');
  return {
    path,
    fill() {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      let written = 0;
      try {
        // A write that does not fit takes what does (the last pages), and the next one fails.
        for (;;) written += writeSync(fd, chunk);
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      rmSync(filler, { force: true });
    },
    remove() {
      try {
        execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      } finally {
        rmSync(path, { recursive: true, force: true });
      }
    },
  };
}
