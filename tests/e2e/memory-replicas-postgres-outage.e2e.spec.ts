import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, eventually } from '@engram/testing';
import { startReplicaStack, type ReplicaStack } from '../support/memory-replicas.js';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import type { ChatRequestJson } from '../support/scripted-openai-upstream.js';
import { say } from '../support/scripted-openai-upstream.js';
import { contentText } from '../support/gateway-fixture.js';

const OUTAGE_MS = 20_000;
const TIER1_FACT = 'The user writes commit messages in the imperative mood';

/**
 * PostgreSQL stopped for 20 s under traffic (#22, "Faults it must survive"), on a server of the
 * test's own: writes answer 503 (never a false acknowledgement, never a 500), chat goes on with the
 * Tier 1 the replicas already have, and everything recovers by itself once the server is back.
 */
describe('two memory replicas while their PostgreSQL is stopped for 20 s', () => {
  let postgres: PrivatePostgres;
  let stack: ReplicaStack;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    stack = await startReplicaStack({ memoryEnv: { ENGRAM_EVENT_STORE: postgres.url }, worker: false, responder: () => say('Sure.') });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await postgres?.remove();
  });

  const store = (content: string, key: string, type = 'MEMORY'): Promise<Response> =>
    fetch(`${stack.gateway.url}/engram/pools/default/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ content, type }),
    });
  const chat = (): Promise<Response> =>
    fetch(`${stack.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'write the commit message' }] }),
    });
  const systemPromptOf = (index: number): string =>
    contentText(
      (stack.upstream.requests[index]!.body as ChatRequestJson).messages.find((message) => message.role === 'system')?.content ?? '',
    );

  it('answers writes 503 while it is down, keeps chat going with Tier 1, and recovers by itself', async () => {
    expect((await store(TIER1_FACT, 'tier1-fact', 'USER')).status).toBe(201);
    expect((await chat()).status).toBe(200);
    expect(systemPromptOf(stack.upstream.requests.length - 1)).toContain(TIER1_FACT);

    const writes: { content: string; startedAt: number; endedAt: number; status: number }[] = [];
    const chats: { startedAt: number; status: number; upstreamIndex: number | null }[] = [];
    let running = true;
    let n = 0;
    const writeLoop = (async () => {
      while (running) {
        const content = `outage note ${n}`;
        const startedAt = Date.now();
        const response = await store(content, `outage-${n++}`);
        await response.arrayBuffer();
        writes.push({ content, startedAt, endedAt: Date.now(), status: response.status });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const chatLoop = (async () => {
      while (running) {
        const startedAt = Date.now();
        const before = stack.upstream.requests.length;
        const response = await chat();
        await response.arrayBuffer();
        chats.push({ startedAt, status: response.status, upstreamIndex: stack.upstream.requests.length > before ? before : null });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await postgres.stop();
    const downAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    // pg_ctl returns a moment after the server takes connections: a write may be acknowledged in between.
    const startingAt = Date.now();
    await postgres.start();
    const upAt = Date.now();
    let recoveredMs = -1;
    await eventually(
      () => {
        const first = writes.find((write) => write.startedAt >= upAt && write.status === 201);
        expect(first).toBeDefined();
        recoveredMs = first!.endedAt - upAt;
      },
      { timeout: 60_000, interval: 250 },
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    running = false;
    await Promise.all([writeLoop, chatLoop]);

    // Never a 500, for writes or chat.
    expect(writes.filter((write) => write.status !== 201 && write.status !== 503)).toEqual([]);
    expect(chats.filter((turn) => turn.status !== 200)).toEqual([]);
    // No acknowledgement while the server was down: a write that started after it stopped and ended before it was started again is a 503.
    const duringOutage = writes.filter((write) => write.startedAt > downAt && write.endedAt < startingAt);
    expect(duringOutage.length).toBeGreaterThan(10);
    expect(duringOutage.filter((write) => write.status !== 503)).toEqual([]);
    // Chat went on with the Tier 1 the replicas had.
    const chatsDuringOutage = chats.filter((turn) => turn.startedAt > downAt && turn.startedAt < startingAt);
    expect(chatsDuringOutage.length).toBeGreaterThan(10);
    for (const turn of chatsDuringOutage) expect(systemPromptOf(turn.upstreamIndex!)).toContain(TIER1_FACT);
    // Every acknowledged write is there afterwards; no process was restarted.
    const acked = writes.filter((write) => write.status === 201).map((write) => write.content);
    expect(acked.length).toBeLessThan(499);
    await eventually(async () => {
      const listed = (await (await fetch(`${stack.gateway.url}/engram/pools/default/memories?limit=500`)).json()) as { data: { content: string }[] };
      const contents = new Set(listed.data.map((entry) => entry.content));
      expect(acked.filter((content) => !contents.has(content))).toEqual([]);
    });
    for (const process of [...stack.replicas.map((replica) => replica.process), stack.gateway.process]) {
      because(`${process.name} exited:\n${process.output().slice(-3_000)}`, () => expect(process.child.exitCode).toBeNull());
    }
    console.info(
      `fault postgres stopped ${OUTAGE_MS} ms: ${writes.length} writes (${duringOutage.length} during the outage, all 503), ` +
        `${chats.length} chats all 200 (${chatsDuringOutage.length} during, Tier 1 injected); first write acknowledged ${recoveredMs} ms after the server was back`,
    );
  }, 180_000);
});
