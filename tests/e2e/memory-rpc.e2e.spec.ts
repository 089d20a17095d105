import { statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { INTERNAL_TOKEN_METADATA_KEY, internalTokenPath, type MemoryClient, MemoryError, MemoryPattern, readInternalToken } from '@engram/contracts';
import { JobName, QueueName } from '@engram/jobs';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, eventually } from '@engram/testing';
import { freePort } from '../support/ports.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startMemory, type RunningMemory } from '../support/stack.js';

describe('memory service over TCP RPC', () => {
  let redis: TestRedis;
  let memory: RunningMemory;
  let client: MemoryClient;

  beforeAll(async () => {
    redis = await startRedis();
    memory = await startMemory({ REDIS_URL: redis.url, CONSOLIDATION_THRESHOLD: '3', METRICS_TOKEN: 'scraper-secret' });
    client = memory.client(5_000);
  });

  afterAll(async () => {
    await client?.close();
    await memory?.stop();
    await redis?.stop();
  });

  it('refuses and logs a call without the internal token, from a raw TCP client speaking Nest framing', async () => {
    const pool = 'rpc-secret';
    await client.call(MemoryPattern.Store, { pool, actor: 'user', content: 'the staging password is in the vault' });
    const token = readInternalToken(memory.dataDir);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(internalTokenPath(memory.dataDir)).mode & 0o777).toBe(0o600);

    const attacker = await RawNestTcp.open(memory.port);
    try {
      for (const [id, metadata] of [
        ['1', undefined],
        ['2', { [INTERNAL_TOKEN_METADATA_KEY]: 'guessed' }],
        ['3', { [INTERNAL_TOKEN_METADATA_KEY]: `${token!}x` }],
      ] as const) {
        const answer = await attacker.call({ pattern: MemoryPattern.List, data: { pool }, id, ...(metadata ? { metadata } : {}) });
        because(`call ${id}`, () => expect(answer).toMatchObject({ id, err: { code: 'unauthorized' } }));
        expect(JSON.stringify(answer)).not.toContain('staging password');
      }
      const purge = await attacker.call({ pattern: MemoryPattern.Purge, data: { pool, id: 'whatever', actor: 'user' }, id: '4' });
      expect(purge).toMatchObject({ err: { code: 'unauthorized' } });
      // The same framing with the token is served: the refusal is the token's, not the client's.
      const served = await attacker.call({
        pattern: MemoryPattern.List,
        data: { pool },
        id: '5',
        metadata: { [INTERNAL_TOKEN_METADATA_KEY]: token! },
      });
      expect(JSON.stringify(served)).toContain('staging password');
    } finally {
      attacker.close();
    }
    await eventually(() => expect(memory.process.output()).toContain('memory call refused: no valid internal token'));
    expect(memory.process.output()).toMatch(/"pattern":"memory.list".*"token":"missing"/);
  });

  it('answers every pattern of the contract', async () => {
    const pool = 'rpc-all';
    const actor = 'user' as const;
    const stored = await client.call(MemoryPattern.Store, {
      pool,
      actor,
      content: 'The user prefers short answers with bullet points',
      type: 'USER',
      category: 'preference',
    });
    expect(stored).toMatchObject({ pool, type: 'USER', category: 'preference', isArchived: false });

    const fact = await client.call(MemoryPattern.Store, { pool, actor, content: 'The project builds with pnpm and turbo' });
    expect(await client.call(MemoryPattern.Get, { pool, id: fact.id })).toMatchObject({ content: fact.content });

    const hits = await client.call(MemoryPattern.Search, { pool, query: 'pnpm', recordReference: true });
    expect(hits.map((hit) => hit.entry.id)).toContain(fact.id);

    expect((await client.call(MemoryPattern.List, { pool })).map((entry) => entry.id).sort()).toEqual([stored.id, fact.id].sort());

    const updated = await client.call(MemoryPattern.Update, { pool, actor, id: fact.id, content: 'The project builds with pnpm' });
    expect(updated.content).toBe('The project builds with pnpm');

    expect(await client.call(MemoryPattern.Categorize, { pool, actor, id: fact.id, category: 'project' })).toMatchObject({
      category: 'project',
    });
    expect(await client.call(MemoryPattern.Confirm, { pool, actor, id: fact.id, confirmed: true })).toMatchObject({
      isConfirmed: true,
    });
    const refreshed = await client.call(MemoryPattern.Refresh, { pool, actor, ids: [fact.id] });
    expect(refreshed[0]?.referenceCount).toBeGreaterThan(0);

    expect(await client.call(MemoryPattern.Archive, { pool, actor, id: fact.id, reason: 'test' })).toMatchObject({
      isArchived: true,
    });
    expect(await client.call(MemoryPattern.Restore, { pool, actor, id: fact.id })).toMatchObject({ isArchived: false });

    const tier1 = await client.call(MemoryPattern.Tier1, { pool });
    expect(tier1.block).toContain('bullet points');
    expect(tier1.ids).toContain(stored.id);
    expect(await client.call(MemoryPattern.Tier1, { pool })).toEqual(tier1);

    const twin = await client.call(MemoryPattern.Store, { pool, actor, content: 'The project builds with pnpm only' });
    const merged = await client.call(MemoryPattern.Consolidate, {
      pool,
      actor: 'worker:consolidate',
      model: 'test',
      merges: [{ content: 'The project builds with pnpm', type: 'MEMORY', category: 'project', supersedes: [fact.id, twin.id] }],
    });
    expect([...merged.archived].sort()).toEqual([fact.id, twin.id].sort());

    expect(await client.call(MemoryPattern.Delete, { pool, actor, id: stored.id, reason: 'test' })).toMatchObject({ id: stored.id });
    expect(await client.call(MemoryPattern.Purge, { pool, actor, id: stored.id })).toEqual({ id: stored.id, purged: true });

    const stats = await client.call(MemoryPattern.Stats, {});
    expect(stats.pools.find((entry) => entry.pool === pool)).toBeDefined();
    const events = await client.call(MemoryPattern.EventsAfter, { after: 0, pool });
    expect(events.map((event) => event.type)).toContain('memory.consolidated');
    expect(events.every((event, index) => index === 0 || event.seq > events[index - 1]!.seq)).toBe(true);
    expect(await client.call(MemoryPattern.Ping, {})).toMatchObject({ ok: true });
  });

  it('answers an unknown id with not_found and bad input with invalid_request', async () => {
    await expect(client.call(MemoryPattern.Get, { pool: 'rpc-errors', id: 'nope' })).rejects.toMatchObject({
      code: 'not_found',
    });
    const bad = client.call(MemoryPattern.Store, { pool: '../etc', actor: 'user', content: 'x' });
    await expect(bad).rejects.toBeInstanceOf(MemoryError);
    await expect(bad).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(client.call(MemoryPattern.Store, { pool: 'ok', actor: 'user', content: '   ' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('never shows one pool the entries of another', async () => {
    const secret = await client.call(MemoryPattern.Store, { pool: 'alice', actor: 'user', content: 'alice secret token rotation' });
    expect(await client.call(MemoryPattern.Search, { pool: 'bob', query: 'secret' })).toEqual([]);
    await expect(client.call(MemoryPattern.Get, { pool: 'bob', id: secret.id })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('enqueues categorization for an uncategorized entry and consolidation past the threshold', async () => {
    const pool = 'rpc-jobs';
    const entry = await client.call(MemoryPattern.Store, { pool, actor: 'user', content: 'Some fact without a category' });
    const categorize = new Queue(QueueName.Categorize, { connection: { url: redis.url } });
    const consolidate = new Queue(QueueName.Consolidate, { connection: { url: redis.url } });
    try {
      await eventually(async () => expect((await categorize.getJobs(['waiting', 'delayed'])).map((job) => job.data.memoryId)).toContain(entry.id), {
        timeout: 5_000,
      });
      for (const content of ['fact two about builds', 'fact three about tests', 'fact four about lint']) {
        await client.call(MemoryPattern.Store, { pool, actor: 'user', content, category: 'project' });
      }
      await eventually(
        async () =>
          expect(
            (await consolidate.getJobs(['waiting', 'delayed'])).some((job) => job.name === JobName.ConsolidatePool && job.data.pool === pool),
          ).toBe(true),
        {
          timeout: 5_000,
        },
      );
    } finally {
      await categorize.close();
      await consolidate.close();
    }
  });

  it("purge removes the pool's jobs whose data holds any text the entry had, and leaves the others", async () => {
    const pool = 'rpc-purge-jobs';
    const actor = 'user' as const;
    const extract = new Queue(QueueName.Extract, { connection: { url: redis.url } });
    try {
      const exchange = (user: string) => ({ user, assistant: 'Noted.' });
      const job = (jobPool: string, requestId: string, user: string, delay = 0) =>
        extract.add(
          JobName.ExtractExchange,
          { pool: jobPool, suggestions: [], exchange: exchange(user), requestId },
          { jobId: `extract.${requestId}`, delay },
        );
      await job(pool, 'r-first', 'Remember: the vault code is 5521-alpha.');
      await job(pool, 'r-later', 'Correction: The vault code is 9034-beta', 60_000);
      await job(pool, 'r-unrelated', 'I like green tea');
      await job('rpc-other-pool', 'r-other', 'the vault code is 5521-alpha');
      const entry = await client.call(MemoryPattern.Store, { pool, actor, content: 'the vault code is 5521-alpha' });
      await client.call(MemoryPattern.Update, { pool, actor, id: entry.id, content: 'the vault code is 9034-beta' });

      await client.call(MemoryPattern.Purge, { pool, actor, id: entry.id });
      const remaining = async () => (await extract.getJobs(['waiting', 'delayed', 'completed', 'failed', 'active'])).map((found) => found.id).sort();
      await eventually(async () => expect(await remaining()).toEqual(['extract.r-other', 'extract.r-unrelated']), { timeout: 10_000 });
    } finally {
      await extract.obliterate({ force: true });
      await extract.close();
    }
  });

  it('serves /metrics on the health port to the internal token or METRICS_TOKEN only, and health to anyone', async () => {
    const health = `http://127.0.0.1:${memory.healthPort}`;
    const metrics = (authorization?: string) => fetch(`${health}/metrics`, authorization ? { headers: { authorization } } : {});
    for (const authorization of [undefined, 'Bearer guessed', `Bearer ${readInternalToken(memory.dataDir)!}x`, 'scraper-secret']) {
      const refused = await metrics(authorization);
      because(`authorization ${authorization ?? 'missing'}`, () => expect(refused.status).toBe(401));
      expect(await refused.json()).toEqual({ error: expect.objectContaining({ type: 'authentication_error', code: 'invalid_api_key' }) });
    }
    for (const authorization of [`Bearer ${readInternalToken(memory.dataDir)!}`, 'bearer scraper-secret']) {
      const served = await metrics(authorization);
      because(`authorization ${authorization.slice(0, 12)}`, () => expect(served.status).toBe(200));
      expect(await served.text()).toContain('engram_memory_');
    }
    expect((await fetch(`${health}/healthz`)).status).toBe(200);
    expect((await fetch(`${health}/readyz`)).status).toBe(200);
    await eventually(() => expect(memory.process.output()).toContain('memory operator request refused'));
  });

  it('keeps serving while Redis is away and enqueues the missed jobs when it is back', async () => {
    const firstRedis = await startRedis({ port: await freePort() });
    const isolated = await startMemory({ REDIS_URL: firstRedis.url });
    const isolatedClient = isolated.client(5_000);
    let secondRedis: TestRedis | undefined;
    try {
      await firstRedis.stop();
      const entry = await isolatedClient.call(MemoryPattern.Store, {
        pool: 'offline',
        actor: 'user',
        content: 'stored while redis is away',
      });
      const ready = await fetch(`http://127.0.0.1:${isolated.healthPort}/readyz`).then((response) => response.json());
      expect(ready).toMatchObject({ status: 'degraded', checks: { redis: { status: 'down' } } });

      secondRedis = await startRedis({ port: firstRedis.port });
      const categorize = new Queue(QueueName.Categorize, { connection: { url: secondRedis.url } });
      try {
        await eventually(async () => expect((await categorize.getJobs(['waiting', 'delayed'])).map((job) => job.data.memoryId)).toContain(entry.id), {
          timeout: 10_000,
        });
      } finally {
        await categorize.close();
      }
    } finally {
      await isolatedClient.close();
      await isolated.stop();
      await secondRedis?.stop();
    }
  });
});

/** Nest's TCP framing by hand (`<length>#<json>`), as any process that reaches the port could speak it. */
class RawNestTcp {
  private buffer = '';
  private readonly waiting = new Map<string, (answer: Record<string, unknown>) => void>();

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (;;) {
        const hash = this.buffer.indexOf('#');
        if (hash === -1) return;
        const length = Number(this.buffer.slice(0, hash));
        if (this.buffer.length < hash + 1 + length) return;
        const answer = JSON.parse(this.buffer.slice(hash + 1, hash + 1 + length)) as Record<string, unknown>;
        this.buffer = this.buffer.slice(hash + 1 + length);
        this.waiting.get(String(answer['id']))?.(answer);
      }
    });
  }

  static open(port: number): Promise<RawNestTcp> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new RawNestTcp(socket)));
      socket.once('error', reject);
    });
  }

  call(packet: { pattern: string; data: unknown; id: string; metadata?: Record<string, string> }): Promise<Record<string, unknown>> {
    const json = JSON.stringify(packet);
    return new Promise((resolve) => {
      this.waiting.set(packet.id, resolve);
      this.socket.write(`${json.length}#${json}`);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}
