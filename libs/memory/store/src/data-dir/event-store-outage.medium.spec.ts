import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { postgresPerTest } from '../testing/postgres-per-test.js';

/**
 * The PostgreSQL event store going away under a replica and coming back: a TCP relay in front of the
 * real server is cut (every connection reset, new ones refused) and opened again on the same port.
 */
class Relay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

const postgres = postgresPerTest();
let relay: Relay;

beforeEach(async () => {
  const url = new URL(postgres.database.url);
  relay = new Relay({ host: url.hostname, port: Number(url.port || 5432) });
  await relay.up();
});
afterEach(async () => {
  await relay.down();
});

const user = { actor: 'user' as const, pool: 'team' };

describe('a memory replica when PostgreSQL goes away', () => {
  it('refuses writes as unavailable (never a false ack), keeps answering reads, and recovers by itself', async () => {
    const viaRelay = new URL(postgres.database.url);
    // The relay listens here; the server may be elsewhere (testcontainers answers on the Docker host's address).
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    const cutOff = await postgres.memoryReplica('a', viaRelay.toString());
    const other = await postgres.memoryReplica('b');
    const before = await cutOff.store({ ...user, content: 'the build server is called hopper' });

    await relay.down();
    const refused = await cutOff.store({ ...user, content: 'written while the store is away' }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'unavailable' });
    // Reads answer from what the replica has, without waiting for the store.
    const started = Date.now();
    expect((await cutOff.get({ pool: 'team', id: before.id })).content).toBe(before.content);
    expect((await cutOff.search({ pool: 'team', query: 'build server' })).map((hit) => hit.entry.id)).toEqual([before.id]);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Meanwhile another replica takes writes.
    const elsewhere = await other.store({ ...user, content: 'the staging server runs Debian 12' });

    await relay.up();
    const after = await eventually(() => cutOff.store({ ...user, content: 'written once the store is back' }), { timeout: 10_000, interval: 200 });
    // Caught up with what the other replica took meanwhile, and nothing it refused was stored.
    const contents = (await cutOff.list({ pool: 'team' })).map((entry) => entry.content).sort();
    expect(contents).toEqual([before.content, elsewhere.content, after.content].sort());
    expect((await other.list({ pool: 'team' })).map((entry) => entry.content).sort()).toEqual(contents);
  });
});
