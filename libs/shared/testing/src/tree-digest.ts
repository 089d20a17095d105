import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under a folder: its path (relative), size and bytes. */
export function* filesUnder(root: string): Generator<{ readonly path: string; readonly bytes: Buffer }> {
  if (!existsSync(root)) return;
  const walk = function* (dir: string): Generator<{ readonly path: string; readonly bytes: Buffer }> {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) yield* walk(path);
      else if (entry.isFile()) yield { path: relative(root, path), bytes: readFileSync(path) };
    }
  };
  yield* walk(root);
}

/**
 * One SHA-256 over a folder's file names, contents and modes: equal before and after means no file
 * was created, removed, written or re-permissioned under it.
 */
export function treeDigest(root: string): string {
  const hash = createHash('sha256');
  for (const file of filesUnder(root)) {
    hash.update(`${file.path}\0${statSync(join(root, file.path)).mode}\0${file.bytes.length}\0`);
    hash.update(file.bytes);
  }
  return hash.digest('hex');
}

/** The files under a folder whose bytes hold `needle` (UTF-8). */
export function filesContaining(root: string, needle: string): string[] {
  return [...filesUnder(root)].filter((file) => file.bytes.includes(needle)).map((file) => file.path);
}
