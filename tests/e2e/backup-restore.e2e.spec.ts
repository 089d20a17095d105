import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type MemoryClient, MemoryPattern } from '@engram/contracts';
import { afterEach, describe, expect, it } from '@jest/globals';
import { repoRoot } from '../support/compose.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startMemory, type RunningMemory } from '../support/stack.js';

const run = promisify(execFile);
const cli = join(repoRoot, 'apps/memory/dist/cli.js');
/** `npx engram <args>`, as an operator runs it; rejects with its stderr when it exits non-zero. */
const engram = (...args: string[]) => run(process.execPath, [cli, ...args], { env: { PATH: process.env['PATH'] ?? '' } });
const readManifest = (backup: string) =>
  JSON.parse(readFileSync(join(backup, 'backup.json'), 'utf8')) as { databaseSeq: number; logSeq: number; pools: string[] };

describe('backup while the memory service runs, restore with it stopped', () => {
  let redis: TestRedis | undefined;
  const running: RunningMemory[] = [];
  const clients: MemoryClient[] = [];
  const dirs: string[] = [];

  const tempDir = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const connect = (memory: RunningMemory): MemoryClient => {
    const client = memory.client(10_000);
    clients.push(client);
    return client;
  };

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    for (const memory of running.splice(0)) await memory.stop({ keepData: true });
    await redis?.stop();
    redis = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('copies every acknowledged memory while writes go on, and restores them into a fresh data dir', async () => {
    redis = await startRedis();
    const dataDir = tempDir('engram-live-');
    const memory = await startMemory({ REDIS_URL: redis.url }, { dataDir });
    running.push(memory);
    const client = connect(memory);
    const pool = 'home';

    const before = [];
    for (let i = 0; i < 20; i += 1) {
      before.push(await client.call(MemoryPattern.Store, { pool, actor: 'user', content: `fact number ${i} about the build` }));
    }
    // Writes keep coming while the backup runs.
    let writing = true;
    const during = (async () => {
      let i = 0;
      while (writing) await client.call(MemoryPattern.Store, { pool, actor: 'llm', content: `later fact ${i++}` });
    })();
    const backup = join(tempDir('engram-backups-'), 'first');
    await engram('backup', '--to', backup, '--data-dir', dataDir);
    const manifest = readManifest(backup);
    writing = false;
    await during;

    expect(manifest.databaseSeq).toBeGreaterThanOrEqual(before.length);
    expect(manifest.logSeq).toBeGreaterThanOrEqual(manifest.databaseSeq);
    expect(manifest.pools).toEqual([pool]);
    // Self-contained: one database file (no -wal/-shm beside it), the log, the flat files, the manifest.
    expect(readdirSync(backup).sort()).toEqual(['backup.json', 'engram.db', 'events', 'pools']);
    expect(readFileSync(join(backup, 'pools', pool, 'MEMORY.md'), 'utf8')).toContain('fact number 0 about the build');

    await expect(engram('restore', '--from', backup, '--data-dir', dataDir)).rejects.toMatchObject({
      stderr: expect.stringMatching(/in use by another engram process/),
    });

    const restoredDir = tempDir('engram-restored-');
    await engram('restore', '--from', backup, '--data-dir', restoredDir);
    const restored = await startMemory({ REDIS_URL: redis.url }, { dataDir: restoredDir });
    running.push(restored);
    const listed = await connect(restored).call(MemoryPattern.List, { pool, limit: 1_000 });
    const ids = new Set(listed.map((entry) => entry.id));
    expect(before.filter((entry) => !ids.has(entry.id))).toEqual([]);
    expect(listed.length).toBe(manifest.logSeq);
  });
});
