import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';

/** A fresh data dir under the OS temp dir; `remove()` deletes it. For medium tests and benchmarks. */
export function tempDataDir(prefix = 'engram-storage-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
