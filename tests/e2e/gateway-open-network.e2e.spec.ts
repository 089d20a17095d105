import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../support/ports.js';
import { startGateway, type RunningGateway } from '../support/stack.js';

/**
 * Compose publishes the gateway on every interface of the server: without ENGRAM_API_KEYS anyone on
 * the network may use it, so the gateway says so at start and in /readyz.
 */
describe('gateway auth on a network', () => {
  const gateways: RunningGateway[] = [];
  // Neither memory nor Redis answers here: /readyz is a 503 then, and still says how auth stands.
  const start = async (env: Record<string, string>): Promise<RunningGateway> => {
    const gateway = await startGateway({
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      MEMORY_HOST: '127.0.0.1',
      MEMORY_PORT: String(await freePort()),
      ...env,
    });
    gateways.push(gateway);
    return gateway;
  };
  const readyz = async (gateway: RunningGateway): Promise<unknown> => (await fetch(`${gateway.url}/readyz`)).json();

  let openOnNetwork: RunningGateway;
  let openOnLoopback: RunningGateway;
  let keyedOnNetwork: RunningGateway;
  beforeAll(async () => {
    openOnNetwork = await start({ GATEWAY_HOST: '0.0.0.0', ENGRAM_API_KEYS: '' });
    openOnLoopback = await start({ GATEWAY_HOST: '127.0.0.1' });
    keyedOnNetwork = await start({ GATEWAY_HOST: '0.0.0.0', ENGRAM_API_KEYS: 'alice=*', UPSTREAM_API_KEY: 'sk-upstream' });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
  });

  it('warns at start when it listens beyond loopback without keys, and /readyz reports auth open', async () => {
    expect(openOnNetwork.process.output()).toContain('ENGRAM_API_KEYS is empty and the gateway listens on 0.0.0.0');
    expect(await readyz(openOnNetwork)).toMatchObject({ auth: 'open' });
  });

  it('does not warn on loopback, where only this machine reaches it', async () => {
    expect(openOnLoopback.process.output()).not.toContain('ENGRAM_API_KEYS is empty');
    expect(await readyz(openOnLoopback)).toMatchObject({ auth: 'open' });
  });

  it('reports auth keyed, without the warning, once ENGRAM_API_KEYS is set', async () => {
    expect(keyedOnNetwork.process.output()).not.toContain('ENGRAM_API_KEYS is empty');
    expect(await readyz(keyedOnNetwork)).toMatchObject({ auth: 'keyed' });
  });
});
