import { createServer, type Server } from 'node:net';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryClient } from './memory-client.js';
import { MemoryError } from './memory-error.js';
import { MemoryPattern } from './memory-pattern.js';

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

describe('MemoryClient against a memory service that is not there', () => {
  const servers: Server[] = [];
  const clients: MemoryClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  const clientOn = (port: number): MemoryClient => {
    const client = new MemoryClient(ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }), 2_000);
    clients.push(client);
    return client;
  };

  it('reports a refused connection as unavailable, not as an error code of its own', async () => {
    const server = createServer();
    const port = await listen(server);
    await new Promise((resolve) => server.close(resolve));

    const failure = await clientOn(port)
      .call(MemoryPattern.Ping, {})
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MemoryError);
    expect((failure as MemoryError).code).toBe('unavailable');
    expect((failure as MemoryError).message).toContain('ECONNREFUSED');
  });

  it('reports a connection the other side drops as unavailable', async () => {
    const server = createServer((socket) => socket.destroy());
    servers.push(server);
    const port = await listen(server);

    const failure = await clientOn(port)
      .call(MemoryPattern.Ping, {})
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MemoryError);
    expect((failure as MemoryError).code).toBe('unavailable');
  });

  it('keeps the code of an error body the service answered with', () => {
    expect(MemoryError.isBody({ code: 'not_found', message: 'no such entry' })).toBe(true);
    expect(MemoryError.isBody(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(false);
  });
});
