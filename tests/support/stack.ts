import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@engram/config';
import { InternalTokenSource, MemoryClient } from '@engram/contracts';
import { freePort, startWithFreshPorts } from './ports.js';
import { startService, type ServiceProcess, type StartOptions } from './service-process.js';

export interface RunningMemory {
  readonly process: ServiceProcess;
  readonly dataDir: string;
  readonly port: number;
  readonly healthPort: number;
  /**
   * MEMORY_HOST/MEMORY_PORT for the processes that call this one, and its ENGRAM_DATA_DIR, where
   * they read the internal token memory generated (as the gateway and worker do under npm start).
   */
  readonly clientEnv: Readonly<Record<string, string>>;
  /** A MemoryClient presenting the internal token from the data dir, as the gateway's. */
  client(timeoutMs: number): MemoryClient;
  /** Stops the process; with `keepData` the data dir stays for a restart. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/** A real memory service on free ports with its own data dir (or the given one). */
export async function startMemory(
  env: Readonly<Record<string, string>> & { REDIS_URL: string },
  options: StartOptions & { dataDir?: string; port?: number; healthPort?: number } = {},
): Promise<RunningMemory> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'engram-data-'));
  // With ENGRAM_ENCRYPTION_KEY(_FILE) the token file is sealed: the test's client reads it with the key, as the gateway does.
  const { encryptionKey } = loadConfig({
    ENGRAM_ENCRYPTION_KEY: env['ENGRAM_ENCRYPTION_KEY'],
    ENGRAM_ENCRYPTION_KEY_FILE: env['ENGRAM_ENCRYPTION_KEY_FILE'],
  });
  // The ports of a memory that ran before: a restart the processes calling it find where they left it.
  const start = async () => {
    const port = options.port ?? (await freePort());
    const healthPort = options.healthPort ?? (await freePort());
    const process = await startService(
      'memory',
      {
        ENGRAM_DATA_DIR: dataDir,
        MEMORY_HOST: '127.0.0.1',
        MEMORY_PORT: String(port),
        MEMORY_HEALTH_PORT: String(healthPort),
        ...env,
      },
      { readyUrl: `http://127.0.0.1:${healthPort}/healthz`, ...options },
    );
    return { port, healthPort, process };
  };
  const { port, healthPort, process } =
    options.port === undefined && options.healthPort === undefined ? await startWithFreshPorts(start) : await start();
  return {
    process,
    dataDir,
    port,
    healthPort,
    clientEnv: { MEMORY_HOST: '127.0.0.1', MEMORY_PORT: String(port), ENGRAM_DATA_DIR: dataDir },
    client: (timeoutMs) =>
      MemoryClient.connect({ replicas: [{ host: '127.0.0.1', port }], timeoutMs, token: new InternalTokenSource(undefined, dataDir, encryptionKey) }),
    stop: async ({ keepData = false } = {}) => {
      await process.stop();
      if (!keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RunningGateway {
  readonly process: ServiceProcess;
  readonly port: number;
  /** e.g. http://127.0.0.1:1234 (no trailing slash, no /v1). */
  readonly url: string;
  stop(): Promise<void>;
}

/** A real gateway on a free port. Pass UPSTREAM_BASE_URL, REDIS_URL and the memory's clientEnv. */
export async function startGateway(env: Readonly<Record<string, string>>, options: StartOptions = {}): Promise<RunningGateway> {
  const { port, process } = await startWithFreshPorts(async () => {
    const port = await freePort();
    const process = await startService(
      'gateway',
      { GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: String(port), ...env },
      { readyUrl: `http://127.0.0.1:${port}/healthz`, ...options },
    );
    return { port, process };
  });
  return { process, port, url: `http://127.0.0.1:${port}`, stop: () => process.stop() };
}

export interface RunningWorker {
  readonly process: ServiceProcess;
  readonly healthPort: number;
  stop(): Promise<void>;
}

/** A real worker. Pass REDIS_URL, the memory's clientEnv, and UPSTREAM_BASE_URL when jobs call a model. */
export async function startWorker(env: Readonly<Record<string, string>>, options: StartOptions = {}): Promise<RunningWorker> {
  const { healthPort, process } = await startWithFreshPorts(async () => {
    const healthPort = await freePort();
    const process = await startService(
      'worker',
      { WORKER_HEALTH_PORT: String(healthPort), ...env },
      { readyUrl: `http://127.0.0.1:${healthPort}/healthz`, ...options },
    );
    return { healthPort, process };
  });
  return { process, healthPort, stop: () => process.stop() };
}
