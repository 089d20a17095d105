import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, eventually } from '@engram/testing';
import { startRedis, type TestRedis } from '../support/redis.js';
import { startGateway, startMemory, startWorker, type RunningGateway, type RunningMemory, type RunningWorker } from '../support/stack.js';

/** Lines of a process's output that a log collector could not parse as one JSON object each. */
function nonJsonLines(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      try {
        const parsed: unknown = JSON.parse(line);
        return typeof parsed !== 'object' || parsed === null;
      } catch {
        return true;
      }
    });
}

describe('every line a service writes is a JSON log line, also while Redis is down', () => {
  let redis: TestRedis;
  let memory: RunningMemory;
  let worker: RunningWorker;
  let gateway: RunningGateway;

  beforeAll(async () => {
    redis = await startRedis({});
    memory = await startMemory({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
    const env = { REDIS_URL: redis.url, ...memory.clientEnv, LOG_LEVEL: 'info', UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1' };
    worker = await startWorker({ ...env, CONSOLIDATION_MODEL: 'off' });
    gateway = await startGateway(env);
  });
  afterAll(async () => {
    await gateway?.stop();
    await worker?.stop();
    await memory?.stop();
    await redis?.stop();
  });

  it('logs the outage as JSON in memory, worker and gateway', async () => {
    await redis.stop();
    // Long enough for every client to notice, fail to reconnect a few times and say so.
    await eventually(() => expect(worker.process.output().split('\n').length).toBeGreaterThan(5), { timeout: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (const service of [worker, memory, gateway]) {
      const output = service.process.output();
      because(service.process.name, () => {
        expect(output.length).toBeGreaterThan(0);
        expect(nonJsonLines(output)).toEqual([]);
      });
    }
  });
});
