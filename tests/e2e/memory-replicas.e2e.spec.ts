import { InternalTokenSource, MemoryClient, MemoryPattern } from '@engram/contracts';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { startReplicaStack, type ReplicaStack } from '../support/memory-replicas.js';
import { say } from '../support/scripted-openai-upstream.js';

interface ReplicaCheck {
  readonly address: string;
  readonly state: string;
  readonly error?: string;
}
interface Readyz {
  readonly status: string;
  readonly memoryReplicas: readonly ReplicaCheck[];
}

/**
 * The gateway and the worker reach two memory processes through MEMORY_HOSTS (#22 part 3). Each
 * keeps its own file log here: this is about routing, failover and /readyz, not about the replicas
 * sharing what they know (the PostgreSQL event store's tests are).
 */
describe('two memory replicas behind MEMORY_HOSTS', () => {
  let stack: ReplicaStack;
  const pools = Array.from({ length: 12 }, (_, i) => `team-${i}`);

  beforeAll(async () => {
    stack = await startReplicaStack({ responder: () => say('Sure.') });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const rest = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${stack.gateway.url}/engram/pools/${path}`, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  const store = (pool: string, content: string, key: string): Promise<Response> =>
    rest(`${pool}/memories`, { method: 'POST', body: JSON.stringify({ content }), headers: { 'idempotency-key': key } });
  const readyz = async (url: string): Promise<{ status: number; body: Readyz }> => {
    const response = await fetch(`${url}/readyz`);
    return { status: response.status, body: (await response.json()) as Readyz };
  };
  const gatewayReadyz = (): Promise<{ status: number; body: Readyz }> => readyz(stack.gateway.url);
  const workerReadyz = (): Promise<{ status: number; body: Readyz }> => readyz(`http://127.0.0.1:${stack.worker!.healthPort}`);
  /** The pools whose memories replica i holds, asked of it alone. */
  const poolsOn = async (index: number): Promise<string[]> => {
    const replica = stack.replicas[index]!;
    const client = MemoryClient.connect({
      replicas: [{ host: '127.0.0.1', port: replica.port }],
      timeoutMs: 5_000,
      token: new InternalTokenSource(stack.clientEnv['ENGRAM_INTERNAL_TOKEN'], replica.dataDir),
    });
    try {
      return (await client.call(MemoryPattern.Stats, {})).pools.map((pool) => pool.pool).sort();
    } finally {
      await client.close();
    }
  };

  it("sends each pool's calls to one replica, spreads the pools over both, and /readyz names each replica", async () => {
    for (const pool of pools) expect((await store(pool, `${pool} deploys from the main branch`, `first-${pool}`)).status).toBe(201);
    const [onFirst, onSecond] = [await poolsOn(0), await poolsOn(1)];
    expect(onFirst.length).toBeGreaterThan(0);
    expect(onSecond.length).toBeGreaterThan(0);
    expect([...onFirst, ...onSecond].sort()).toEqual([...pools].sort());

    const addresses = stack.replicas.map((replica) => `127.0.0.1:${replica.port}`);
    for (const ready of [await gatewayReadyz(), await workerReadyz()]) {
      expect(ready.status).toBe(200);
      expect(ready.body.memoryReplicas.map(({ address, state }) => [address, state])).toEqual(addresses.map((address) => [address, 'up']));
    }
  });

  it('kill -9 of one replica costs no call: its pools are served by the other at once, /readyz names it down, and it takes its pools back when restarted', async () => {
    const killedPools = await poolsOn(0);
    const results: { pool: string; startedAt: number; status: number }[] = [];
    let running = true;
    let n = 0;
    // Four clients calling all the time: reads, and stores with an Idempotency-Key (which may go again).
    const loops = Array.from({ length: 4 }, async (_, loop) => {
      while (running) {
        const pool = pools[n++ % pools.length]!;
        const startedAt = Date.now();
        const response =
          n % 2 === 0 ? await rest(`${pool}/memories`) : await store(pool, `note ${n} of loop ${loop} in ${pool}`, `load-${loop}-${n}`);
        await response.arrayBuffer();
        results.push({ pool, startedAt, status: response.status });
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const killedAt = Date.now();
    await stack.replicas[0]!.process.kill9();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    running = false;
    await Promise.all(loops);

    const afterKill = results.filter((result) => result.startedAt >= killedAt);
    const onKilledPools = afterKill.filter((result) => killedPools.includes(result.pool));
    expect(onKilledPools.length).toBeGreaterThan(10);
    // Reads and keyed stores may go again, so not even the calls in flight on the killed replica failed.
    expect(results.filter((result) => result.status >= 300)).toEqual([]);
    const firstServed = Math.min(...onKilledPools.map((result) => result.startedAt)) - killedAt;
    expect(firstServed).toBeLessThan(2_000);

    for (const ready of [await gatewayReadyz(), await workerReadyz()]) {
      expect(ready.status).toBe(200);
      expect(ready.body.memoryReplicas[0]).toMatchObject({ address: `127.0.0.1:${stack.replicas[0]!.port}`, state: 'down' });
      expect(ready.body.memoryReplicas[0]!.error).toMatch(/ECONNREFUSED|closed|ECONNRESET/);
      expect(ready.body.memoryReplicas[1]).toMatchObject({ state: 'up' });
    }
    // A conversation in one of its pools goes on (its memory now comes from the other replica).
    const chat = await fetch(`${stack.gateway.url}/pools/${killedPools[0]!}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'how do we deploy?' }] }),
    });
    expect(chat.status).toBe(200);
    expect(stack.gateway.process.output()).toContain('memory replica unreachable');

    await stack.restart(0);
    await eventually(async () => expect((await gatewayReadyz()).body.memoryReplicas.map(({ state }) => state)).toEqual(['up', 'up']), {
      timeout: 10_000,
    });
    await eventually(async () => expect((await workerReadyz()).body.memoryReplicas.map(({ state }) => state)).toEqual(['up', 'up']), {
      timeout: 10_000,
    });
    // Its pools are its own again: what it stored before the kill is what the gateway lists.
    const listed = (await (await rest(`${killedPools[0]!}/memories`)).json()) as { data: { content: string }[] };
    expect(listed.data.map((entry) => entry.content)).toContain(`${killedPools[0]!} deploys from the main branch`);
  });
});
