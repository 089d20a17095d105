import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { startGatewayStack } from '../support/gateway-fixture.js';
import { freePort, PortTaken, startWithFreshPorts } from '../support/ports.js';
import { say } from '../support/scripted-openai-upstream.js';
import { startService } from '../support/service-process.js';
import { startSurfacesStack } from '../support/surfaces-stack.js';
import { startWorkerStack } from './worker-stack.js';

/** The processes this jest worker started that still run (the `ps` asking is left out). */
function runningChildren(): string[] {
  return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^\d+ ps /.test(line));
}

const listeningServers = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'TCPServerWrap').length;

/**
 * A stack helper whose last service does not start (as a service that is not ready in time on a
 * loaded machine) must stop what it had started: the test file never gets the stack to stop, and a
 * Redis, memory process or scripted upstream left running kept the jest worker from exiting ("A
 * worker process has failed to exit gracefully" at the end of the e2e tier).
 */
describe('the e2e stack helpers, when a part fails to start', () => {
  it.each([
    [
      'startGatewayStack (its gateway refuses its configuration)',
      () => startGatewayStack({ responder: [say('ok')], gatewayEnv: { LOG_LEVEL: 'chatty' } }),
    ],
    ['startSurfacesStack (its gateway refuses its configuration)', () => startSurfacesStack({ gatewayEnv: { LOG_LEVEL: 'chatty' } })],
    ['startWorkerStack (its worker refuses an unknown queue)', () => startWorkerStack({ workerEnv: { WORKER_QUEUES: 'no-such-queue' } })],
  ])('%s: stops the processes and servers it had started, then fails', async (_helper, start) => {
    const children = runningChildren();
    const servers = listeningServers();
    await expect(start()).rejects.toThrow(/did not become ready/);
    expect(runningChildren().filter((child) => !children.includes(child))).toEqual([]);
    expect(listeningServers()).toBe(servers);
  });
});

/**
 * Services bind the ports a test chose for them; under parallel jest another process could take one
 * in between (EADDRINUSE), as any outgoing connection takes its local port from the kernel's
 * ephemeral range, where `listen(0)` found them.
 */
describe('the ports the e2e helpers choose', () => {
  it('are outside the ephemeral range and never the same twice in a process', async () => {
    const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = [];
    for (let index = 0; index < 200; index++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    expect(ports.filter((port) => port >= ephemeralStart!)).toEqual([]);
  });

  it('a service whose port was taken fails as PortTaken, leaving nothing running, and starts on fresh ports', async () => {
    // Another process's server on the port (its connections cut, so that it closes at the end).
    const holder = createServer((socket) => socket.destroy());
    const taken = await freePort();
    await new Promise<void>((resolve) => holder.listen(taken, '127.0.0.1', resolve));
    try {
      const children = runningChildren();
      const env = {
        REDIS_URL: 'redis://127.0.0.1:9',
        MEMORY_HOST: '127.0.0.1',
        MEMORY_PORT: '9',
        UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
        GATEWAY_HOST: '127.0.0.1',
      };
      const start = (port: number) =>
        startService('gateway', { ...env, GATEWAY_PORT: String(port) }, { readyUrl: `http://127.0.0.1:${port}/healthz` });
      await expect(start(taken)).rejects.toBeInstanceOf(PortTaken);
      expect(runningChildren().filter((child) => !children.includes(child))).toEqual([]);

      const tried: number[] = [];
      // The first try gets the taken port (as when another test's process won it), the next a fresh one.
      const gateway = await startWithFreshPorts(async () => {
        const port = tried.length === 0 ? taken : await freePort();
        tried.push(port);
        return start(port);
      });
      await gateway.stop();
      expect(tried).toHaveLength(2);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
