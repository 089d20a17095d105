import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import { ensureInternalToken } from '@engram/contracts';
import { openMemoryService } from '@engram/memory-store';
import { because, filesContaining, silentLogger } from '@engram/testing';
import { repoRoot } from '../support/compose.js';

const cli = join(repoRoot, 'apps/memory/dist/cli.js');
const TOKEN = 'kumquat3overture';
const ENTRIES = 3_000;
const KEY = EncryptionKey.generate();

interface Run {
  readonly code: number | null;
  readonly killed: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** When to kill a run: after some milliseconds, or as soon as the data dir shows a step of the conversion. */
type KillAt = number | ((dataDir: string) => boolean);

/** `npx engram <args>` as a real process; with `killAt`, kill -9 then unless it ended by itself. */
function engram(args: readonly string[], env: Record<string, string>, killAt?: KillAt, dataDir = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let killed = false;
    const kill = () => (killed = child.kill('SIGKILL'));
    const timer =
      killAt === undefined
        ? undefined
        : typeof killAt === 'number'
          ? setTimeout(kill, killAt)
          : setInterval(() => {
              if (killAt(dataDir)) kill();
            }, 2);
    child.once('exit', (code) => {
      clearTimeout(timer);
      clearInterval(timer);
      resolve({ code, killed: killed && code === null, stdout, stderr });
    });
  });
}

const journalStep = (dataDir: string): string | undefined => {
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'convert.json'), 'utf8')) as { step: string }).step;
  } catch {
    return undefined;
  }
};
/** The steps of a conversion, as the data dir shows them: a kill as each appears. */
const STEPS: Record<string, (dataDir: string) => boolean> = {
  'journal written': (dataDir) => existsSync(join(dataDir, 'convert.json')),
  'database copied': (dataDir) => existsSync(join(dataDir, 'convert-new', 'engram.db')),
  'log being sealed': (dataDir) => existsSync(join(dataDir, 'convert-new', 'events')),
  'copy verified, swapping': (dataDir) => journalStep(dataDir) === 'swapping',
  'old database moved out': (dataDir) => existsSync(join(dataDir, 'convert-old', 'engram.db')),
  'old log moved out': (dataDir) => existsSync(join(dataDir, 'convert-old', 'events')),
  'swapped, verifying': (dataDir) => journalStep(dataDir) === 'swapped',
};

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

    let resumed = 0;
    const kills: [string, KillAt][] = [
      ['0.3 of a run', Math.round(duration * 0.3)],
      ['0.6 of a run', Math.round(duration * 0.6)],
      ...Object.entries(STEPS),
    ];
    for (const [index, [when, killAt]] of kills.entries()) {
      const dataDir = join(home, `kill-${index}`);
      cpSync(seed, dataDir, { recursive: true });
      await engram(['encrypt', '--data-dir', dataDir], env, killAt, dataDir);
      const again = await engram(['encrypt', '--data-dir', dataDir], env);
      because(`killed at ${when} (a run takes ${duration} ms): ${again.stderr}`, () => expect(again.code).toBe(0));
      if (again.stdout.includes('finishing an interrupted run')) resumed++;
      expect(await stats(dataDir, env)).toEqual(seeded);
      const verify = await engram(['verify', '--data-dir', dataDir], env);
      because(verify.stdout, () => expect(verify.code).toBe(0));
      expect(filesContaining(dataDir, TOKEN)).toEqual([]);
      expect(readdirSync(dataDir).filter((name) => name.startsWith('convert'))).toEqual([]);
      rmSync(dataDir, { recursive: true, force: true });
    }
    // Most kills landed inside the conversion (its journal was there for the next run to finish).
    expect(resumed).toBeGreaterThanOrEqual(4);
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
    const killed = await engram(rekey, { ENGRAM_ENCRYPTION_KEY: KEY }, STEPS['copy verified, swapping'], dataDir);
    if (killed.killed) {
      // Until it is run again, the data dir is refused, naming the command.
      const stat = await engram(['stats', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: KEY });
      expect(stat.stderr).toContain('was interrupted: run `npx engram rekey` again to finish it');
    }
    const rekeyed = await engram(rekey, { ENGRAM_ENCRYPTION_KEY: KEY });
    because(rekeyed.stderr, () => expect(rekeyed.code).toBe(0));
    expect(await stats(dataDir, { ENGRAM_ENCRYPTION_KEY: next })).toEqual(seeded);
    expect((await engram(['stats', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: KEY })).stderr).toContain('encrypted with another key');

    await engram(['decrypt', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: next }, STEPS['old log moved out'], dataDir);
    const decrypt = await engram(['decrypt', '--data-dir', dataDir], { ENGRAM_ENCRYPTION_KEY: next });
    because(decrypt.stderr, () => expect(decrypt.code).toBe(0));
    expect(await stats(dataDir, {})).toEqual(seeded);
    expect(filesContaining(dataDir, TOKEN).sort()).toEqual(
      expect.arrayContaining(['engram.db', 'events/0000000000000001.ndjson', 'pools/home/MEMORY.md']),
    );
  }, 300_000);
});
