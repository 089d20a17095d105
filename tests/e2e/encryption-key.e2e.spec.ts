import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import { MemoryPattern, readInternalToken } from '@engram/contracts';
import { JobName, jobOptionsFor, QueueName, queuedJobData, type JobItem } from '@engram/jobs';
import { because, eventually, filesContaining, treeDigest } from '@engram/testing';
import { Queue } from 'bullmq';
import { repoRoot } from '../support/compose.js';
import { freePort } from '../support/ports.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startService } from '../support/service-process.js';
import { startGateway, startMemory } from '../support/stack.js';

const run = promisify(execFile);
const cli = join(repoRoot, 'apps/memory/dist/cli.js');
const TOKEN = 'quixotic9marmalade';

async function keygen(): Promise<string> {
  const { stdout } = await run(process.execPath, [cli, 'keygen'], { env: { PATH: process.env['PATH'] ?? '' } });
  return stdout;
}

/** Starts the memory service on a data dir and expects it to refuse: exit 1, with its one line. */
async function refusedStart(dataDir: string, env: Record<string, string>, redis: TestRedis): Promise<string> {
  const memory = await startService('memory', {
    ENGRAM_DATA_DIR: dataDir,
    REDIS_URL: redis.url,
    MEMORY_HOST: '127.0.0.1',
    MEMORY_PORT: String(await freePort()),
    MEMORY_HEALTH_PORT: String(await freePort()),
    ...env,
  });
  const code = await new Promise<number | null>((resolve) => memory.child.once('exit', (exitCode) => resolve(exitCode)));
  because(memory.output(), () => expect(code).toBe(1));
  const lines = memory.output().trim().split('\n');
  because(memory.output(), () => expect(lines).toHaveLength(1));
  return (JSON.parse(lines[0]!) as { msg: string }).msg;
}

describe('the memory service and ENGRAM_ENCRYPTION_KEY, as real processes', () => {
  let redis: TestRedis;
  let home: string;
  let key: string;

  beforeAll(async () => {
    redis = await startRedis();
    home = mkdtempSync(join(tmpdir(), 'engram-key-'));
    key = (await keygen()).trim();
  });
  afterAll(async () => {
    await redis.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('engram keygen prints a fresh 32-byte key as hex each time', async () => {
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect((await keygen()).trim()).not.toBe(key);
  });

  it('writes engram.db, the flat files and the internal token sealed with the key from a file, and refuses a missing or wrong key in one line without changing a file', async () => {
    const dataDir = join(home, 'encrypted');
    const keyFile = join(home, 'engram.key');
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    const memory = await startMemory({ REDIS_URL: redis.url, ENGRAM_ENCRYPTION_KEY_FILE: keyFile }, { dataDir });
    const client = memory.client(10_000);
    try {
      await client.call(MemoryPattern.Store, { pool: 'home', actor: 'user', content: `the alarm code is ${TOKEN}`, category: 'environment' });
    } finally {
      await client.close();
    }
    // The gateway reads the sealed token with the same key: memory answers its readiness check.
    const gateway = await startGateway({ REDIS_URL: redis.url, ENGRAM_ENCRYPTION_KEY_FILE: keyFile, ...memory.clientEnv });
    try {
      const ready = await fetch(`${gateway.url}/readyz`);
      expect(await ready.json()).toMatchObject({ checks: { memory: 'up' } });
    } finally {
      await gateway.stop();
    }
    await memory.stop({ keepData: true });
    expect(filesContaining(dataDir, TOKEN)).toEqual([]);
    expect(readFileSync(join(dataDir, 'internal-token')).subarray(0, 17).toString()).toBe('engram-sealed-v1\n');
    expect(() => readInternalToken(dataDir)).toThrow('internal-token is encrypted and no key is set');

    const before = treeDigest(dataDir);
    expect(await refusedStart(dataDir, {}, redis)).toBe(
      `engram memory failed to start: the data dir ${dataDir} is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) to its key`,
    );
    expect(await refusedStart(dataDir, { ENGRAM_ENCRYPTION_KEY: (await keygen()).trim() }, redis)).toBe(
      `engram memory failed to start: the data dir ${dataDir} is encrypted with another key than ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) holds`,
    );
    expect(await refusedStart(dataDir, { ENGRAM_ENCRYPTION_KEY: 'not-a-key' }, redis)).toMatch(/ENGRAM_ENCRYPTION_KEY: must be 32 bytes/);
    expect(treeDigest(dataDir)).toBe(before);

    const exported = await run(process.execPath, [cli, 'export', '--pool', 'home', '--data-dir', dataDir], {
      env: { PATH: process.env['PATH'] ?? '', ENGRAM_ENCRYPTION_KEY: key },
    });
    expect(exported.stdout).toContain(TOKEN);
  });

  it("purge removes the pool's sealed extraction jobs that hold the entry's text, which it opens with the key", async () => {
    const memory = await startMemory({ REDIS_URL: redis.url, ENGRAM_ENCRYPTION_KEY: key }, { dataDir: join(home, 'purge-jobs') });
    const client = memory.client(10_000);
    const extract = new Queue(QueueName.Extract, { connection: { url: redis.url } });
    try {
      const add = async (requestId: string, user: string) => {
        const item: JobItem = {
          name: JobName.ExtractExchange,
          data: { pool: 'home', requestId, exchangeId: requestId, suggestions: [], exchange: { user, assistant: 'Noted.' } },
        };
        // Delayed, so no worker would take them meanwhile; sealed as a gateway with the key queues them.
        await extract.add(item.name, queuedJobData(item, EncryptionKey.parse(key)), { ...jobOptionsFor(item), delay: 60_000 });
      };
      await add('r-secret', `Remember: the safe opens with ${TOKEN}.`);
      await add('r-unrelated', 'I like green tea');
      expect(JSON.stringify((await extract.getJobs(['delayed'])).map((job) => job.data))).not.toContain(TOKEN);
      const entry = await client.call(MemoryPattern.Store, { pool: 'home', actor: 'user', content: `the safe opens with ${TOKEN}` });
      await client.call(MemoryPattern.Purge, { pool: 'home', actor: 'user', id: entry.id });
      await eventually(async () => expect((await extract.getJobs(['delayed', 'waiting'])).map((job) => job.id)).toEqual(['extract.r-unrelated']), {
        timeout: 10_000,
      });
    } finally {
      await extract.obliterate({ force: true });
      await extract.close();
      await client.close();
      await memory.stop();
    }
  });

  it('refuses a plaintext data dir started with a key, naming engram encrypt, without changing a file', async () => {
    const dataDir = join(home, 'plain');
    const memory = await startMemory({ REDIS_URL: redis.url }, { dataDir });
    await memory.stop({ keepData: true });
    const before = treeDigest(dataDir);
    expect(await refusedStart(dataDir, { ENGRAM_ENCRYPTION_KEY: key }, redis)).toBe(
      `engram memory failed to start: the data dir ${dataDir} is not encrypted but ENGRAM_ENCRYPTION_KEY is set: ` +
        'stop the services and run `npx engram encrypt` to encrypt it with the key, or unset the key',
    );
    expect(treeDigest(dataDir)).toBe(before);
  });
});
