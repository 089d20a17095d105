import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { repoRoot } from '../support/compose.js';
import { freePort } from '../support/ports.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitForHttp } from '../support/service-process.js';

/** `npm start` (or `node ops/start.mjs ...`) in its own process group, as a terminal runs it. */
class Supervisor {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static start(command: string, args: readonly string[], env: Record<string, string>, cwd: string): Supervisor {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    return new Supervisor(child);
  }

  /** Ctrl-C in a terminal: SIGINT to the whole foreground process group. */
  pressCtrlC(): void {
    process.kill(-this.child.pid!, 'SIGINT');
  }

  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const match = this.stdout.match(pattern);
      if (match) return match;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no ${pattern} in output:\n${this.stdout}\n${this.stderr}`);
  }

  pidsOf(service: string): number[] {
    return [...this.stdout.matchAll(new RegExp(`${service} started \\(pid (\\d+)\\)`, 'g'))].map((match) => Number(match[1]));
  }

  /** Last resort in cleanup: nothing this test started may outlive it. */
  killEverything(): void {
    for (const service of ['memory', 'worker', 'gateway']) for (const pid of this.pidsOf(service)) kill(pid, 'SIGKILL');
    kill(-this.child.pid!, 'SIGKILL');
  }
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function servicesEnv(redisUrl: string, dataDir: string) {
  const ports = {
    GATEWAY_PORT: await freePort(),
    MEMORY_PORT: await freePort(),
    MEMORY_HEALTH_PORT: await freePort(),
    WORKER_HEALTH_PORT: await freePort(),
  };
  const env = {
    REDIS_URL: redisUrl,
    ENGRAM_DATA_DIR: dataDir,
    UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1',
    LOG_LEVEL: 'info',
    ...Object.fromEntries(Object.entries(ports).map(([key, value]) => [key, String(value)])),
  };
  return { env, ports };
}

describe('npm start: the three services on this machine, without Docker', () => {
  let redis: TestRedis | undefined;
  let supervisor: Supervisor | undefined;
  const dirs: string[] = [];

  const others: Supervisor[] = [];

  afterEach(async () => {
    supervisor?.killEverything();
    supervisor = undefined;
    for (const other of others.splice(0)) other.killEverything();
    await redis?.stop();
    redis = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('stops with a one-line explanation of how to start Redis when none answers', async () => {
    const nobody = await freePort();
    const cwd = mkdtempSync(join(tmpdir(), 'engram-start-'));
    dirs.push(cwd);
    supervisor = Supervisor.start(process.execPath, [join(repoRoot, 'ops/start.mjs')], { REDIS_URL: `redis://127.0.0.1:${nobody}` }, cwd);

    expect(await supervisor.exited).toBe(1);
    const lines = supervisor.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`no Redis answers at redis://127.0.0.1:${nobody}`);
    expect(lines[0]).toContain('docker run -d --name engram-redis -p 6379:6379 redis:7-alpine');
    expect(supervisor.pidsOf('memory')).toEqual([]);
  });

  it('prefixes logs by service, restarts a crashed service, and Ctrl-C stops them all', async () => {
    redis = await startRedis();
    const dataDir = mkdtempSync(join(tmpdir(), 'engram-start-data-'));
    dirs.push(dataDir);
    const { env, ports } = await servicesEnv(redis.url, dataDir);
    supervisor = Supervisor.start('npm', ['start'], env, repoRoot);

    // npm start builds first (tsc -b: up to date after `npm test`'s build, but it still checks).
    await supervisor.waitFor(/gateway started \(pid \d+\)/, 150_000);
    await waitForHttp(`http://127.0.0.1:${ports.MEMORY_HEALTH_PORT}/healthz`, 30_000);
    await waitForHttp(`http://127.0.0.1:${ports.WORKER_HEALTH_PORT}/healthz`, 30_000);
    await waitForHttp(`http://127.0.0.1:${ports.GATEWAY_PORT}/healthz`, 30_000);
    for (const service of ['memory', 'worker', 'gateway']) {
      // Each service's own structured log lines, behind its name.
      await supervisor.waitFor(new RegExp(`^${service}\\s* \\| \\{.*"service":"${service}"`, 'm'));
    }

    const [firstGateway] = supervisor.pidsOf('gateway');
    process.kill(firstGateway!, 'SIGKILL');
    await supervisor.waitFor(/gateway exited \(SIGKILL\); restarting/);
    await supervisor.waitFor(/gateway started \(pid \d+\)[\s\S]*gateway started \(pid \d+\)/);
    await waitForHttp(`http://127.0.0.1:${ports.GATEWAY_PORT}/healthz`, 30_000);
    expect(isAlive(supervisor.pidsOf('gateway').at(-1)!)).toBe(true);

    const pids = ['memory', 'worker', 'gateway'].map((service) => supervisor!.pidsOf(service).at(-1)!);
    supervisor.pressCtrlC();
    await supervisor.waitFor(/stopped$/m, 30_000);
    expect(pids.filter(isAlive)).toEqual([]);
    await expect(fetch(`http://127.0.0.1:${ports.GATEWAY_PORT}/healthz`)).rejects.toThrow();
  }, 180_000);

  it('npm run start:memory, start:worker and start:gateway started at once build once and all three run', async () => {
    redis = await startRedis();
    const dataDir = mkdtempSync(join(tmpdir(), 'engram-start-data-'));
    dirs.push(dataDir);
    const { env, ports } = await servicesEnv(redis.url, dataDir);
    // Three terminals (or a process manager) within the same second.
    const starts = ['memory', 'worker', 'gateway'].map((service) => Supervisor.start('npm', ['run', `start:${service}`], env, repoRoot));
    others.push(...starts);

    await waitForHttp(`http://127.0.0.1:${ports.MEMORY_HEALTH_PORT}/healthz`, 240_000);
    await waitForHttp(`http://127.0.0.1:${ports.WORKER_HEALTH_PORT}/healthz`, 60_000);
    await waitForHttp(`http://127.0.0.1:${ports.GATEWAY_PORT}/readyz`, 60_000);
    const outputs = starts.map((start) => start.stdout + start.stderr);
    expect(outputs.filter((output) => output.includes('> engram@0.1.0 build'))).toHaveLength(1);
    expect(outputs.filter((output) => output.includes('using the build another start has just made'))).toHaveLength(2);
    for (const output of outputs) expect(output).not.toContain('Found another Vite build process');

    const pids = starts.flatMap((start, index) => start.pidsOf(['memory', 'worker', 'gateway'][index]!));
    for (const start of starts) start.pressCtrlC();
    await Promise.all(starts.map((start) => start.waitFor(/stopped$/m, 30_000)));
    expect(pids.filter(isAlive)).toEqual([]);
  }, 300_000);

  it('npm run start:memory starts the memory service alone and restarts it when it crashes', async () => {
    // What the script runs once built (the test above builds through it).
    const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['start:memory']).toBe('node ops/build-once.mjs && node ops/start.mjs memory');
    redis = await startRedis();
    const dataDir = mkdtempSync(join(tmpdir(), 'engram-start-data-'));
    dirs.push(dataDir);
    const { env, ports } = await servicesEnv(redis.url, dataDir);
    supervisor = Supervisor.start(process.execPath, [join(repoRoot, 'ops/start.mjs'), 'memory'], env, repoRoot);

    await waitForHttp(`http://127.0.0.1:${ports.MEMORY_HEALTH_PORT}/healthz`, 60_000);
    expect(supervisor.pidsOf('memory')).toHaveLength(1);
    expect(supervisor.pidsOf('gateway')).toEqual([]);
    expect(supervisor.pidsOf('worker')).toEqual([]);

    // Alone, a crashed memory is restarted too: nothing but the restart timer keeps the supervisor alive then.
    process.kill(supervisor.pidsOf('memory')[0]!, 'SIGKILL');
    await supervisor.waitFor(/memory exited \(SIGKILL\); restarting/);
    await supervisor.waitFor(/memory started \(pid \d+\)[\s\S]*memory started \(pid \d+\)/);
    await waitForHttp(`http://127.0.0.1:${ports.MEMORY_HEALTH_PORT}/healthz`, 60_000);
    expect(isAlive(supervisor.pidsOf('memory').at(-1)!)).toBe(true);
    supervisor.pressCtrlC();
    await supervisor.waitFor(/stopped$/m, 30_000);
  }, 120_000);
});
