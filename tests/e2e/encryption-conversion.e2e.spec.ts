import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import { ensureInternalToken } from '@engram/contracts';
import { openMemoryService } from '@engram/storage';
import { because, filesContaining, silentLogger } from '@engram/testing';
import { repoRoot } from '../support/compose.js';

const cli = join(repoRoot, 'apps/memory/dist/cli.js');
const TOKEN = 'kumquat3overture';
const ENTRIES = 6_000;
const KEY = EncryptionKey.generate();

interface Run {
  readonly code: number | null;
  readonly killed: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npx engram <args>` as a real process; with `killAfterMs`, kill -9 then unless it ended by itself. */
function engram(args: readonly string[], env: Record<string, string>, killAfterMs?: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let killed = false;
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => (killed = child.kill('SIGKILL')), killAfterMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, killed: killed && code === null, stdout, stderr });
    });
  });
}

const stats = async (dataDir: string, env: Record<string, string>): Promise<{ lastSeq: number; pools: { pool: string; active: number }[] }> =>
  JSON.parse((await engram(['stats', '--json', '--data-dir', dataDir], env)).stdout) as {
    lastSeq: number;
    pools: { pool: string; active: number }[];
  };

describe('engram encrypt / rekey / decrypt, killed with SIGKILL at any point and run again', () => {
  let home: string;
  let seed: string;
  let seeded: { lastSeq: number; pools: { pool: string; active: number }[] };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'engram-convert-'));
    seed = join(home, 'seed');
    const service = await openMemoryService({ dataDir: seed, tier1MaxChars: 400, logger: silentLogger() });
    try {
      await service.store({ pool: 'home', actor: 'user', content: `the safe opens with ${TOKEN}`, category: 'environment' });
      for (let start = 0; start < ENTRIES; start += 500) {
        await Promise.all(
          Array.from({ length: 500 }, (_, i) =>
            service.store({
              pool: `pool-${(start + i) % 7}`,
              actor: 'user',
              content: `fact number ${start + i}: ${'lorem ipsum dolor sit amet '.repeat(6)}`,
            }),
          ),
        );
      }
    } finally {
      await service.close();
    }
    ensureInternalToken(undefined, seed);
    seeded = await stats(seed, {});
  }, 180_000);
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('encrypt finishes after a kill -9 anywhere, loses no memory, and leaves no memory in the clear', async () => {
    const env = { ENGRAM_ENCRYPTION_KEY: KEY };
    // How long one uninterrupted run takes here: kills are spread over it.
    const whole = join(home, 'whole');
    cpSync(seed, whole, { recursive: true });
    const started = Date.now();
    const full = await engram(['encrypt', '--data-dir', whole], env);
    const duration = Date.now() - started;
    because(full.stderr, () => expect(full.code).toBe(0));

    let interrupted = 0;
    let resumed = 0;
    for (const fraction of [0.3, 0.45, 0.55, 0.65, 0.72, 0.8, 0.87, 0.94]) {
      const dataDir = join(home, `kill-${fraction}`);
      cpSync(seed, dataDir, { recursive: true });
      const killed = await engram(['encrypt', '--data-dir', dataDir], env, Math.round(duration * fraction));
      if (killed.killed) interrupted++;
      const again = await engram(['encrypt', '--data-dir', dataDir], env);
      because(`killed after ${Math.round(duration * fraction)} ms of ${duration}: ${again.stderr}`, () => expect(again.code).toBe(0));
      if (again.stdout.includes('finishing an interrupted run')) resumed++;
      expect(await stats(dataDir, env)).toEqual(seeded);
      const verify = await engram(['verify', '--data-dir', dataDir], env);
      because(verify.stdout, () => expect(verify.code).toBe(0));
      expect(filesContaining(dataDir, TOKEN).filter((path) => !path.startsWith('events/'))).toEqual([]);
      expect(readdirSync(dataDir).filter((name) => name.startsWith('convert'))).toEqual([]);
      rmSync(dataDir, { recursive: true, force: true });
    }
    // The kills landed inside runs, and some inside the conversion itself (its journal was found).
    expect(interrupted).toBeGreaterThanOrEqual(6);
    expect(resumed).toBeGreaterThanOrEqual(1);
  }, 600_000);

  it('rekey and decrypt finish after a kill -9 too; the service start refuses an interrupted one, naming the command', async () => {
    const dataDir = join(home, 'rekey');
    cpSync(seed, dataDir, { recursive: true });
    expect((await engram(['encrypt', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: KEY })).code).toBe(0);
    const next = EncryptionKey.generate();
    const keyFile = join(home, 'next.key');
    writeFileSync(keyFile, 'not a key\n');
    const notAKey = await engram(['rekey', '--new-key-file', keyFile, '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: KEY });
    expect(notAKey.stderr).toContain(`--new-key-file ${keyFile}: must be 32 bytes`);
    writeFileSync(keyFile, `${next}\n`);
    const rekey = ['rekey', '--new-key-file', keyFile, '--data-dir', dataDir];
    let attempt = await engram(rekey, { ENGRAM_ENCRYPTION_KEY: KEY }, 1_500);
    if (attempt.killed) {
      const stat = await engram(['stats', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: KEY });
      if (stat.code !== 0) expect(stat.stderr).toMatch(/was interrupted: run `npx engram rekey` again to finish it|encrypted with another key/);
      attempt = await engram(rekey, { ENGRAM_ENCRYPTION_KEY: KEY });
    }
    because(attempt.stderr, () => expect(attempt.code).toBe(0));
    expect(await stats(dataDir, { ENGRAM_ENCRYPTION_KEY: next })).toEqual(seeded);
    expect((await engram(['stats', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: KEY })).stderr).toContain('encrypted with another key');

    let decrypt = await engram(['decrypt', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: next }, 1_500);
    if (decrypt.killed) decrypt = await engram(['decrypt', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: next });
    because(decrypt.stderr, () => expect(decrypt.code).toBe(0));
    expect(await stats(dataDir, {})).toEqual(seeded);
    expect(filesContaining(dataDir, TOKEN).sort()).toEqual(expect.arrayContaining(['engram.db', 'pools/home/MEMORY.md']));
  }, 300_000);
});
