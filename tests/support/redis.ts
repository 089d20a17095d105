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

/**
 * A private Redis for one test file: testcontainers' Redis where a Docker engine answers,
 * otherwise a real `redis-server` on a free port in a temp dir. With `port`, always a local
 * redis-server on that port (to bring "the same" Redis back after stopping it).
 */
export async function startRedis(options: { port?: number } = {}): Promise<TestRedis> {
  if (options.port === undefined && process.env['ENGRAM_TEST_DOCKER'] !== 'off' && dockerEngineAnswers()) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    const url = container.getConnectionUrl();
    return { url, port: container.getPort(), stop: async () => void (await container.stop()) };
  }
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'engram-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
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
