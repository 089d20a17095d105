import { execFileSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { startGatewayStack } from '../support/gateway-fixture.js';
import { say } from '../support/scripted-openai-upstream.js';
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
