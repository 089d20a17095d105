import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, PortTaken, startWithFreshPorts } from './ports.js';

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
  const redis =
    options.port === undefined ? await startWithFreshPorts(async () => startLocalRedis(await freePort())) : await startLocalRedis(options.port);
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
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForRedis(port, () => child.exitCode !== null || child.signalCode !== null);
  } catch (error) {
    // Nothing of a start that failed stays: a redis-server left running keeps the jest worker from exiting.
    await stop();
    const message = `${(error as Error).message}\n--- output ---\n${printed}`;
    throw /Address already in use/i.test(printed) ? new PortTaken(message) : new Error(message);
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop };
}

/** As long as a service's start may take (see START_TIMEOUT_MS): redis-server starts at once, unless the machine is loaded. */
const REDIS_START_TIMEOUT_MS = 30_000;

async function waitForRedis(port: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + REDIS_START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`redis-server on port ${port} exited`);
    const ping = spawnSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe', timeout: 5_000 });
    if (ping.stdout?.toString().trim() === 'PONG') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within ${REDIS_START_TIMEOUT_MS / 1000} s`);
}
