import { createServer, type Server, type Socket } from 'node:net';
import { ClientProxyFactory, JsonSocket, Transport } from '@nestjs/microservices';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryClient } from './memory-client.js';
import { MemoryError } from './memory-error.js';
import { MemoryPattern } from './memory-pattern.js';
import { ReplicaSet } from './memory-replica-set.js';

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

interface Packet {
  readonly id: string;
  readonly pattern: string;
  readonly data: Record<string, unknown>;
}

/**
 * A process at the other end of the memory channel, speaking Nest's TCP framing (`length#json`),
 * that answers each packet as `reply` says: a response, an error body, nothing, or a dropped connection.
 */
class FramedPeer {
  readonly received: Packet[] = [];
  private readonly sockets = new Set<Socket>();
  readonly server: Server;

  constructor(private readonly reply: (packet: Packet) => { response: unknown } | { err: unknown } | 'drop' | 'silence') {
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.setEncoding('utf8');
      let buffer = '';
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        for (;;) {
          const hash = buffer.indexOf('#');
          if (hash === -1) return;
          const length = Number(buffer.slice(0, hash));
          if (buffer.length < hash + 1 + length) return;
          const packet = JSON.parse(buffer.slice(hash + 1, hash + 1 + length)) as Packet;
          buffer = buffer.slice(hash + 1 + length);
          this.received.push(packet);
          const answer = this.reply(packet);
          if (answer === 'drop') return void socket.destroy();
          if (answer === 'silence') continue;
          const json = JSON.stringify({ id: packet.id, isDisposed: true, ...answer });
          socket.write(`${json.length}#${json}`);
        }
      });
    });
  }

  /** As kill -9 does: the listener and every connection gone at once. */
  async kill(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('MemoryClient against memory replicas', () => {
  const peers: FramedPeer[] = [];
  const clients: MemoryClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    for (const peer of peers.splice(0)) if (peer.server.listening) await peer.kill();
  });

  const peer = async (reply: ConstructorParameters<typeof FramedPeer>[0] = () => ({ response: { ok: true } })) => {
    const created = new FramedPeer(reply);
    peers.push(created);
    return { peer: created, port: await listen(created.server) };
  };
  const deadPort = async (): Promise<number> => {
    const server = createServer();
    const port = await listen(server);
    await new Promise((resolve) => server.close(resolve));
    return port;
  };
  const clientOn = (ports: readonly number[], timeoutMs = 2_000, probeEveryMs = 50): MemoryClient => {
    const client = new MemoryClient(
      ports.map((port) => ({
        address: `127.0.0.1:${port}`,
        proxy: ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }),
      })),
      { defaultTimeoutMs: timeoutMs, probeEveryMs },
    );
    clients.push(client);
    return client;
  };
  const failureOf = (promise: Promise<unknown>): Promise<MemoryError> =>
    promise.then(
      () => {
        throw new Error('expected the call to fail');
      },
      (error: unknown) => error as MemoryError,
    );

  it('reports a refused connection to its only replica as unavailable', async () => {
    const failure = await failureOf(clientOn([await deadPort()]).call(MemoryPattern.Ping, {}));
    expect(failure).toBeInstanceOf(MemoryError);
    expect(failure.code).toBe('unavailable');
    expect(failure.message).toContain('ECONNREFUSED');
  });

  it('reports a connection the other side drops as unavailable', async () => {
    const { port } = await peer(() => 'drop');
    expect((await failureOf(clientOn([port]).call(MemoryPattern.Ping, {}))).code).toBe('unavailable');
  });

  it('keeps the code of an error body the service answered with', () => {
    expect(MemoryError.isBody({ code: 'not_found', message: 'no such entry' })).toBe(true);
    expect(MemoryError.isBody(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(false);
  });

  it("sends all of a pool's calls to one replica, and the pools of a refused one to another; a ping brings it back", async () => {
    const a = await peer();
    const b = await peer();
    const client = clientOn([a.port, b.port]);
    const pools = Array.from({ length: 16 }, (_, i) => `pool-${i}`);
    for (const pool of pools) for (let i = 0; i < 3; i++) await client.call(MemoryPattern.List, { pool });
    const servedBy = (pool: string): string[] =>
      [a, b].flatMap(({ peer: served, port }) => (served.received.some((packet) => packet.data['pool'] === pool) ? [String(port)] : []));
    for (const pool of pools) expect(servedBy(pool)).toHaveLength(1);
    expect(a.peer.received.length).toBeGreaterThan(0);
    expect(b.peer.received.length).toBeGreaterThan(0);

    await a.peer.kill();
    const before = b.peer.received.length;
    for (const pool of pools) await client.call(MemoryPattern.List, { pool });
    expect(b.peer.received.length - before).toBe(pools.length);
    expect((await client.readiness(500)).map(({ state, ping }) => [state, ping])).toEqual([
      ['down', 'down'],
      ['up', 'up'],
    ]);

    const back = new FramedPeer(() => ({ response: { ok: true, lastSeq: 7, diskFull: null } }));
    peers.push(back);
    await listen(back.server, a.port);
    const deadline = Date.now() + 2_000;
    while ((await client.readiness(500))[0]!.state !== 'up' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await client.readiness(500))[0]).toMatchObject({ address: `127.0.0.1:${a.port}`, state: 'up', ping: 'up', lastSeq: 7 });
    for (const pool of pools) await client.call(MemoryPattern.List, { pool });
    expect(back.received.filter((packet) => packet.pattern === MemoryPattern.List).length).toBeGreaterThan(0);
  });

  it('sends a store that broke on the wire to another replica only when it carries an id or an idempotency key', async () => {
    const dropper = await peer(() => 'drop');
    const other = await peer(() => ({ response: { id: 'stored' } }));
    // A pool whose first replica is the dropping one (the order every client computes).
    const order = new ReplicaSet([dropper.port, other.port].map((port) => ({ address: `127.0.0.1:${port}` })));
    const unkeyed = Array.from({ length: 64 }, (_, i) => `pool-${i}`).find((pool) => order.order(pool)[0]!.address.endsWith(`:${dropper.port}`))!;
    const store = { actor: 'user' as const, content: 'the release train leaves on tuesdays' };
    // Each call below on a fresh client, whose replica marks are clean (a drop marks the replica down).
    const fresh = (): MemoryClient => clientOn([dropper.port, other.port], 2_000, 60_000);
    const otherBefore = other.peer.received.length;
    const lost = await failureOf(fresh().call(MemoryPattern.Store, { pool: unkeyed, ...store }));
    expect(lost.code).toBe('unavailable');
    expect(other.peer.received.length).toBe(otherBefore);
    const update = await failureOf(fresh().call(MemoryPattern.Update, { pool: unkeyed, id: 'abcd', content: 'x', actor: 'user' }));
    expect(update.code).toBe('unavailable');
    expect(other.peer.received.length).toBe(otherBefore);

    expect(await fresh().call(MemoryPattern.Store, { pool: unkeyed, idempotencyKey: 'rest:1', ...store })).toEqual({ id: 'stored' });
    expect(await fresh().call(MemoryPattern.Store, { pool: unkeyed, id: 'fact-1', ...store })).toEqual({ id: 'stored' });
    expect(await fresh().call(MemoryPattern.List, { pool: unkeyed })).toEqual({ id: 'stored' });
    expect(other.peer.received.length).toBe(otherBefore + 3);
  });

  it('sends any call whose connection was refused to another replica, writes included', async () => {
    const other = await peer(() => ({ response: { id: 'updated' } }));
    const client = clientOn([await deadPort(), other.port]);
    for (let i = 0; i < 8; i++) {
      expect(await client.call(MemoryPattern.Update, { pool: `pool-${i}`, id: 'abcd', content: 'x', actor: 'user' })).toEqual({ id: 'updated' });
    }
  });

  it('sends a call to another replica when the first gives no connection in time (a lost machine, a name that does not resolve)', async () => {
    const other = await peer(() => ({ response: { id: 'updated' } }));
    const silentPort = await deadPort();
    // A socket whose connection never completes, as to an address nothing answers (a lost machine).
    class NeverConnects extends JsonSocket {
      override connect(): this {
        return this;
      }
    }
    const proxyOn = (port: number, socketClass?: typeof JsonSocket) =>
      ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port, ...(socketClass ? { socketClass } : {}) } });
    const client = new MemoryClient(
      [
        { address: `127.0.0.1:${silentPort}`, proxy: proxyOn(silentPort, NeverConnects) },
        { address: `127.0.0.1:${other.port}`, proxy: proxyOn(other.port) },
      ],
      { defaultTimeoutMs: 1_000, probeEveryMs: 60_000 },
    );
    clients.push(client);
    const order = new ReplicaSet([{ address: `127.0.0.1:${silentPort}` }, { address: `127.0.0.1:${other.port}` }]);
    const pool = Array.from({ length: 64 }, (_, i) => `pool-${i}`).find((name) => order.order(name)[0]!.address.endsWith(`:${silentPort}`))!;
    const started = Date.now();
    expect(await client.call(MemoryPattern.Update, { pool, id: 'abcd', content: 'x', actor: 'user' })).toEqual({ id: 'updated' });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await client.readiness(300))[0]).toMatchObject({ state: 'down', ping: 'down', error: expect.stringContaining('no connection within') });
  });

  it('never sends elsewhere a call the replica answered with an error or did not answer in time', async () => {
    const refusing = await peer(() => ({ err: { code: 'conflict', message: 'entry is archived' } }));
    const silent = await peer(() => 'silence');
    const client = clientOn([refusing.port, silent.port], 300);
    for (let i = 0; i < 8; i++) {
      const failure = await failureOf(client.call(MemoryPattern.Get, { pool: `pool-${i}`, id: 'abcd' }));
      expect(['conflict', 'unavailable']).toContain(failure.code);
      if (failure.code === 'unavailable') expect(failure.message).toContain('did not answer memory.get within 300 ms');
    }
    expect(refusing.peer.received.length + silent.peer.received.length).toBe(8);
  });
});
