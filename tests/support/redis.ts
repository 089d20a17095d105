import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

function dockerEngineAnswers(): boolean {
  const result = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5_000, stdio: 'pipe' });
  return result.status === 0;
}

/** The image compose runs; testcontainers uses the local copy and never pulls it again. */
const REDIS_IMAGE = 'redis:7-alpine';

/**
 * A private Redis for one test file: testcontainers' Redis where a Docker engine answers
 * (`DOCKER_HOST`; ENGRAM_TEST_DOCKER=off opts out), otherwise a real `redis-server` on a free port
 * in a temp dir; the test log says which. With `port`, always a local redis-server on that port
 * (to bring "the same" Redis back after stopping it).
 */
export async function startRedis(options: { port?: number } = {}): Promise<TestRedis> {
  if (options.port === undefined && process.env['ENGRAM_TEST_DOCKER'] !== 'off' && dockerEngineAnswers()) {
    return startRedisContainer();
  }
  const redis = await startLocalRedis(options.port ?? (await freePort()));
  console.info(`test redis: local redis-server on port ${redis.port}`);
  return redis;
}

async function startRedisContainer(): Promise<TestRedis> {
  // Ryuk, testcontainers' reaper, is an image from a registry; stop() removes each container instead
  // (and .ci/run removes any a crashed test run left behind, by the org.testcontainers label).
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  const { RedisContainer } = await import('@testcontainers/redis');
  // Like the local redis-server: nothing persisted.
  const container = await new RedisContainer(REDIS_IMAGE).withCommand(['redis-server', '--save', '', '--appendonly', 'no']).start();
  console.info(`test redis: testcontainers ${REDIS_IMAGE}, container ${container.getId().slice(0, 12)} on port ${container.getPort()}`);
  return { url: container.getConnectionUrl(), port: container.getPort(), stop: async () => void (await container.stop({ remove: true })) };
}

async function startLocalRedis(port: number): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  await waitForRedis(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForRedis(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const ping = spawnSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe' });
    if (ping.stdout?.toString().trim() === 'PONG') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within 10 s`);
}
