import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MemoryPattern } from '@engram/contracts';
import { afterEach, describe, expect, it } from '@jest/globals';
import { because } from '@engram/testing';
import { repoRoot } from '../support/compose.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startMemory, type RunningMemory } from '../support/stack.js';

const run = promisify(execFile);

/** The commands of the runbook's `sh` block in a section, as a person would paste them. */
function runbookCommands(section: string): string[] {
  const text = readFileSync(join(repoRoot, 'ops/RECOVERY.md'), 'utf8');
  const start = text.indexOf(`## ${section}`);
  const body = text.slice(start, text.indexOf('\n## ', start + 1));
  const block = /^\s*```sh\n([\s\S]*?)^\s*```$/m.exec(body)?.[1];
  if (!block) throw new Error(`ops/RECOVERY.md section ${section} has no sh block`);
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

const KEY = '7d1f0c9a4be2385e6a0f1d2c3b4a59687786950a4b3c2d1e0f1a2b3c4d5e6f70';

describe.each([
  ['', {}],
  [' on an encrypted data dir, with ENGRAM_ENCRYPTION_KEY set', { ENGRAM_ENCRYPTION_KEY: KEY }],
])('ops/RECOVERY.md, followed word for word%s', (_, keyEnv: Record<string, string>) => {
  let redis: TestRedis | undefined;
  let memory: RunningMemory | undefined;
  let home: string | undefined;

  afterEach(async () => {
    await memory?.stop({ keepData: true });
    memory = undefined;
    await redis?.stop();
    redis = undefined;
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** A person's checkout: the repository's tools, and a data dir at ./data written by a real memory service. */
  async function checkoutWithMemories(): Promise<{ home: string; ids: string[] }> {
    home = mkdtempSync(join(tmpdir(), 'engram-runbook-'));
    symlinkSync(join(repoRoot, 'node_modules'), join(home, 'node_modules'));
    mkdirSync(join(home, 'data'));
    redis = await startRedis();
    memory = await startMemory({ REDIS_URL: redis.url, ...keyEnv }, { dataDir: join(home, 'data') });
    const client = memory.client(10_000);
    const ids: string[] = [];
    try {
      const pool = 'default';
      ids.push(
        (await client.call(MemoryPattern.Store, { pool, actor: 'user', content: 'I prefer short answers', type: 'USER', category: 'preference' })).id,
      );
      ids.push(
        (
          await client.call(MemoryPattern.Store, {
            pool,
            actor: 'llm',
            content: 'The NAS runs the stack with docker compose',
            category: 'environment',
          })
        ).id,
      );
      ids.push(
        (await client.call(MemoryPattern.Store, { pool, actor: 'llm', content: 'Postgres was ruled out for the data layer', category: 'decision' }))
          .id,
      );
    } finally {
      await client.close();
    }
    await memory.stop({ keepData: true });
    memory = undefined;
    return { home, ids };
  }

  const sh = async (cwd: string, command: string) => {
    try {
      const { stdout } = await run('sh', ['-c', command], {
        cwd,
        env: { PATH: process.env['PATH'] ?? '', HOME: cwd, npm_config_yes: 'false', ...keyEnv },
        timeout: 60_000,
      });
      return { code: 0, output: stdout };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
    }
  };

  it('1. a corrupted database is rebuilt from the log by replay', async () => {
    const { home: cwd, ids } = await checkoutWithMemories();
    const fd = openSync(join(cwd, 'data', 'engram.db'), 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096);
    closeSync(fd);

    for (const command of runbookCommands('1.')) {
      const result = await sh(cwd, command);
      because(`${command}\n${result.output}`, () => expect(result.code).toBe(0));
    }
    const exported = await sh(cwd, 'npx engram export --pool default --format json');
    for (const id of ids) expect(exported.output).toContain(id);
    expect(exported.output).toContain('I prefer short answers');
  });

  it('2. a damaged log is replaced by one rebuilt from the flat files by import-flat', async () => {
    const { home: cwd, ids } = await checkoutWithMemories();
    // Damage the first line of the log: everything after it is unusable, the flat files are intact.
    const [segment] = readdirSync(join(cwd, 'data', 'events'));
    const fd = openSync(join(cwd, 'data', 'events', segment!), 'r+');
    writeSync(fd, Buffer.from('XXXXXXXX'), 0, 8, 10);
    closeSync(fd);

    for (const command of runbookCommands('2.')) {
      const result = await sh(cwd, command);
      because(`${command}\n${result.output}`, () => expect(result.code).toBe(0));
    }
    const exported = await sh(cwd, 'npx engram export --pool default --format json');
    for (const id of ids) expect(exported.output).toContain(id);
    expect(exported.output).toContain('I prefer short answers');
  });
});
