import { closeSync, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { InternalTokenSource, MemoryClient, MemoryPattern, ReplicaSet } from '@engram/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually, startPostgres, type TestDatabase, type TestPostgres } from '@engram/testing';
import { startReplicaStack, type ReplicaStack } from '../support/memory-replicas.js';

/**
 * Faults two memory replicas on one PostgreSQL event store must survive (#22, "Faults it must
 * survive"): each a real PostgreSQL database, real memory processes, a real gateway calling both
 * through MEMORY_HOSTS. The figures each test prints go into the closing note.
 */
describe('two memory replicas on one PostgreSQL event store, under faults', () => {
  let postgres: TestPostgres;
  let database: TestDatabase;
  let stack: ReplicaStack;

  beforeAll(async () => {
    postgres = await startPostgres();
    database = await postgres.database();
    stack = await startReplicaStack({ memoryEnv: { ENGRAM_EVENT_STORE: database.url }, worker: false });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await database?.drop();
    await postgres?.stop();
  });

  const clientOf = (index: number, timeoutMs = 10_000): MemoryClient =>
    MemoryClient.connect({
      replicas: [{ host: '127.0.0.1', port: stack.replicas[index]!.port }],
      timeoutMs,
      token: new InternalTokenSource(stack.clientEnv['ENGRAM_INTERNAL_TOKEN'], stack.replicas[index]!.dataDir),
    });
  const clients: MemoryClient[] = [];
  const replicaClient = (index: number): MemoryClient => {
    const client = clientOf(index);
    clients.push(client);
    return client;
  };
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  const store = (pool: string, content: string, key: string): Promise<Response> =>
    fetch(`${stack.gateway.url}/engram/pools/${pool}/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ content }),
    });

  it('kill -9 of one replica during 500 concurrent writes over both: no acknowledged write lost or doubled, the other serves within 2 s, the killed one catches up when back', async () => {
    const pools = Array.from({ length: 16 }, (_, i) => `fault-kill-${i}`);
    const order = new ReplicaSet(stack.replicas.map((replica) => ({ address: `127.0.0.1:${replica.port}` })));
    const killedPools = new Set(pools.filter((pool) => order.order(pool)[0]!.address.endsWith(`:${stack.replicas[0]!.port}`)));
    expect(killedPools.size).toBeGreaterThan(0);
    expect(killedPools.size).toBeLessThan(pools.length);

    const writes = Array.from({ length: 500 }, (_, i) => ({ pool: pools[i % pools.length]!, content: `fact ${i}: build ${i} shipped`, key: `kill-${i}` }));
    const acked: { pool: string; content: string; id: string; at: number }[] = [];
    const refused: { status: number; at: number; message: string }[] = [];
    let killedAt = Number.POSITIVE_INFINITY;
    let next = 0;
    const concurrency = 64;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < writes.length) {
          const write = writes[next++]!;
          const response = await store(write.pool, write.content, write.key);
          const at = Date.now();
          if (response.status === 201) acked.push({ ...write, id: ((await response.json()) as { id: string }).id, at });
          else {
            const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
            refused.push({ status: response.status, at, message: body.error?.message ?? '' });
          }
          if (acked.length === 150 && killedAt === Number.POSITIVE_INFINITY) {
            killedAt = Date.now();
            void stack.replicas[0]!.process.kill9();
          }
        }
      }),
    );
    const elapsedMs = Date.now() - started;
    const reasons = new Map<string, number>();
    for (const { message, at } of refused) {
      const reason = `${at < killedAt ? 'before' : 'after'} the kill: ${message.replace(/[0-9a-z]{10}|\d+/g, 'N').slice(0, 120)}`;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    expect(killedAt).toBeLessThan(Number.POSITIVE_INFINITY);
    // Never a 500: a write that could not be made is a 503 the caller may retry.
    expect(refused.filter((failure) => failure.status !== 503)).toEqual([]);
    const ackedOnKilledPoolsAfter = acked.filter((write) => killedPools.has(write.pool) && write.at > killedAt);
    const firstServedMs = Math.min(...ackedOnKilledPoolsAfter.map((write) => write.at)) - killedAt;
    expect(firstServedMs).toBeLessThan(2_000);

    // Every acknowledged write is on the surviving replica, once.
    const survivor = replicaClient(1);
    await eventually(
      async () => {
        for (const write of acked) expect(await survivor.call(MemoryPattern.Get, { pool: write.pool, id: write.id })).toMatchObject({ content: write.content });
      },
      { timeout: 15_000, interval: 500 },
    );
    for (const pool of pools) {
      const listed = await survivor.call(MemoryPattern.List, { pool, limit: 1_000 });
      const contents = listed.map((entry) => entry.content);
      expect(contents.length).toBe(new Set(contents).size);
    }

    // Back on its data dir and ports, the killed replica catches up on what the other took meanwhile.
    const restartStarted = Date.now();
    await stack.restart(0);
    const back = replicaClient(0);
    await eventually(
      async () => {
        for (const write of acked) expect(await back.call(MemoryPattern.Get, { pool: write.pool, id: write.id })).toMatchObject({ content: write.content });
      },
      { timeout: 30_000, interval: 500 },
    );
    const caughtUpMs = Date.now() - restartStarted;
    console.info(
      `fault kill -9: ${writes.length} writes at concurrency ${concurrency} over ${pools.length} pools in ${elapsedMs} ms; ` +
        `${acked.length} acknowledged, ${refused.length} answered 503, 0 lost; killed after 150 acks; ` +
        `its pools served by the other ${firstServedMs} ms after the kill; restarted and caught up in ${caughtUpMs} ms; ` +
        `503s: ${JSON.stringify(Object.fromEntries(reasons))}`,
    );
  }, 180_000);

  it.each(['deleted', 'corrupted'] as const)('a replica whose SQLite file was %s rebuilds it from the table at start', async (damage) => {
    const pool = `fault-sqlite-${damage}`;
    const writer = replicaClient(1);
    const stored = [];
    for (let i = 0; i < 30; i++) stored.push(await writer.call(MemoryPattern.Store, { pool, content: `runbook step ${i} of ${damage}`, actor: 'user' }));
    const replica = stack.replicas[0]!;
    await replica.stop({ keepData: true });
    const file = join(replica.dataDir, 'engram.db');
    expect(existsSync(file)).toBe(true);
    if (damage === 'deleted') {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    } else {
      const fd = openSync(file, 'r+');
      writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096);
      closeSync(fd);
    }
    await stack.restart(0);
    const rebuilt = replicaClient(0);
    const listed = await rebuilt.call(MemoryPattern.List, { pool, limit: 1_000 });
    expect(listed.map((entry) => entry.id).sort()).toEqual(stored.map((entry) => entry.id).sort());
  }, 90_000);
});
