import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, eventually, smallDisk, type SmallDisk } from '@engram/testing';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startGateway, startMemory, startWorker, type RunningGateway, type RunningMemory, type RunningWorker } from '../support/stack.js';

interface Entry {
  readonly id: string;
  readonly content: string;
}

/**
 * Memory's data dir on a 2 MiB file system that the test fills: a store it cannot finish is a 503
 * (never a 500), memory keeps running and serving reads and says it takes no writes in /readyz (the
 * gateway's and the worker's too), a restart on the full disk (killed, or stopped cleanly) starts instead of looping, and once space is freed it
 * takes writes again with every acknowledged write there exactly once.
 */
describe('memory on a full disk', () => {
  let disk: SmallDisk;
  let redis: TestRedis;
  let memory: RunningMemory;
  let gateway: RunningGateway;
  let worker: RunningWorker;
  const env = (): { REDIS_URL: string; LOG_LEVEL: string } => ({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
  /** Memory again on the same data dir and ports, where the gateway finds it. */
  const restartMemory = (options: { timeoutMs?: number } = {}): Promise<RunningMemory> =>
    startMemory(env(), { dataDir: disk.path, port: memory.port, healthPort: memory.healthPort, ...options });
  const post = (content: string, key: string): Promise<Response> =>
    fetch(`${gateway.url}/engram/pools/disk/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ content, type: 'USER', category: 'preference' }),
    });
  const entries = async (): Promise<Entry[]> =>
    ((await (await fetch(`${gateway.url}/engram/pools/disk/memories?limit=500`)).json()) as { data: Entry[] }).data;
  const memoryReady = async (): Promise<{ status: number; body: { status: string; checks: { store: Record<string, unknown> } } }> => {
    const response = await fetch(`http://127.0.0.1:${memory.healthPort}/readyz`);
    return { status: response.status, body: (await response.json()) as { status: string; checks: { store: Record<string, unknown> } } };
  };
  const gatewayReady = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${gateway.url}/readyz`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const workerReady = async (): Promise<{ status: number; body: { status: string; checks: { memory: Record<string, unknown> } } }> => {
    const response = await fetch(`http://127.0.0.1:${worker.healthPort}/readyz`);
    return { status: response.status, body: (await response.json()) as { status: string; checks: { memory: Record<string, unknown> } } };
  };
  const fact = (label: string): string => `${label}: ${'the build cache lives on the NAS under /srv/cache '.repeat(38)}`.slice(0, 1900).trim();

  beforeAll(async () => {
    disk = smallDisk();
    redis = await startRedis();
    memory = await startMemory(env(), { dataDir: disk.path });
    gateway = await startGateway({ ...env(), ...memory.clientEnv, UPSTREAM_BASE_URL: 'http://127.0.0.1:9', MEMORY_RPC_TIMEOUT_MS: '5000' });
    worker = await startWorker({ ...env(), ...memory.clientEnv, CONSOLIDATION_MODEL: 'off' });
  });
  afterAll(async () => {
    await worker?.stop();
    await gateway?.stop();
    await memory?.stop({ keepData: true });
    await redis?.stop();
    disk?.remove();
  });

  it('answers 503, stops taking writes and says so in /readyz, survives a restart on the full disk, and takes writes again once space is freed', async () => {
    const acknowledged: Entry[] = [];
    for (const label of ['first', 'second']) {
      const response = await post(fact(label), label);
      expect(response.status).toBe(201);
      acknowledged.push((await response.json()) as Entry);
    }

    disk.fill();
    // Until a write finds no room (a short tail of the log's last page may still take one), each is acknowledged.
    let refused: { key: string; content: string; response: Response } | undefined;
    for (let index = 0; index < 20 && !refused; index++) {
      const content = fact(`during ${index}`);
      const response = await post(content, `during-${index}`);
      if (response.status === 201) acknowledged.push((await response.json()) as Entry);
      else refused = { key: `during-${index}`, content, response };
    }
    expect(refused?.response.status).toBe(503);
    expect(await refused!.response.json()).toMatchObject({ error: { message: expect.stringContaining('the data disk is full') } });

    const whileFull = await post('not while the disk is full', 'while-full');
    expect(whileFull.status).toBe(503);
    expect(await whileFull.json()).toMatchObject({ error: { message: expect.stringContaining('nothing was stored') } });
    expect(await memoryReady()).toMatchObject({
      status: 503,
      body: {
        status: 'read-only',
        checks: { store: { status: 'read-only', since: expect.any(String), error: expect.stringMatching(/ENOSPC|full/) } },
      },
    });
    expect(await gatewayReady()).toMatchObject({
      status: 503,
      body: { checks: { memory: 'read-only' }, status: expect.stringContaining('memory read-only'), memoryDiskFull: { since: expect.any(String) } },
    });
    // The worker's jobs write: it is not ready either, and says why.
    expect(await workerReady()).toMatchObject({
      status: 503,
      body: { status: expect.stringContaining('memory read-only'), checks: { memory: { status: 'read-only', since: expect.any(String) } } },
    });
    // Reads go on.
    expect((await entries()).map((entry) => entry.id)).toEqual(expect.arrayContaining(acknowledged.map((entry) => entry.id)));
    because('memory is still the process it was (it did not exit)', () => expect(memory.process.child.exitCode).toBeNull());

    // Killed and started again on the full disk: it starts, read-only, instead of exiting in a loop.
    await memory.process.kill9();
    memory = await restartMemory({ timeoutMs: 30_000 });
    await eventually(async () => expect((await memoryReady()).body.status).toBe('read-only'), { timeout: 10_000 });
    expect((await post('not after a restart either', 'after-restart')).status).toBe(503);
    // Stopped cleanly (which removes the database's WAL index file) and started again on the full disk: the same.
    await memory.stop({ keepData: true });
    memory = await restartMemory({ timeoutMs: 30_000 });
    await eventually(async () => expect((await memoryReady()).body.status).toBe('read-only'), { timeout: 10_000 });
    expect((await post('not after a clean restart either', 'after-clean-restart')).status).toBe(503);

    disk.free();
    await eventually(async () => expect(await memoryReady()).toMatchObject({ status: 200, body: { status: 'ready' } }), { timeout: 30_000 });
    await eventually(async () => expect((await gatewayReady()).body).toMatchObject({ status: 'ready', checks: { memory: 'up' } }), {
      timeout: 10_000,
    });
    await eventually(async () => expect(await workerReady()).toMatchObject({ status: 200, body: { status: 'ready' } }), { timeout: 10_000 });

    // The refused write, retried with its key, is stored once; a new write is taken.
    const retried = await post(refused!.content, refused!.key);
    expect([200, 201]).toContain(retried.status);
    const after = await post('stored once space was back', 'after');
    expect(after.status).toBe(201);
    const all = [...acknowledged, (await retried.json()) as Entry, (await after.json()) as Entry];

    const check = async (): Promise<void> => {
      const stored = await entries();
      expect(stored.map((entry) => entry.content).sort()).toEqual(all.map((entry) => entry.content).sort());
      const file = readFileSync(join(disk.path, 'pools', 'disk', 'USER.md'), 'utf8');
      for (const entry of all) expect(file).toContain(`[id:${entry.id}]`);
    };
    await check();
    // And after a clean restart: nothing lost, nothing twice.
    await memory.stop({ keepData: true });
    memory = await restartMemory();
    await eventually(async () => expect((await gatewayReady()).body).toMatchObject({ status: 'ready' }), { timeout: 15_000 });
    await check();
  });
});
