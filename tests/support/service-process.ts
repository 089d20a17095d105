import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PortTaken } from './ports.js';

export type ServiceName = 'memory' | 'gateway' | 'worker';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ServiceProcess {
  readonly name: ServiceName;
  readonly child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process has exited. */
  stop(): Promise<void>;
  /** kill -9: no shutdown hooks run. */
  kill9(): Promise<void>;
}

export interface StartOptions {
  /** Polled until it answers 200; the usual choice is the service's /healthz. */
  readonly readyUrl?: string;
  readonly timeoutMs?: number;
  /** Entry point relative to the app's dist folder. */
  readonly entry?: string;
  readonly args?: readonly string[];
}

/**
 * Starts a built app (`apps/<name>/dist/main.js`) as a real process with exactly the given
 * environment (plus PATH), and waits until it is ready.
 */
export async function startService(name: ServiceName, env: Readonly<Record<string, string>>, options: StartOptions = {}): Promise<ServiceProcess> {
  const entry = `${repoRoot}apps/${name}/dist/${options.entry ?? 'main.js'}`;
  const child = spawn(process.execPath, [entry, ...(options.args ?? [])], {
    cwd: repoRoot,
    env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const service: ServiceProcess = {
    name,
    child,
    output: () => printed,
    stop: () => terminate('SIGTERM'),
    kill9: () => terminate('SIGKILL'),
  };

  if (options.readyUrl) {
    try {
      await waitForHttp(options.readyUrl, options.timeoutMs ?? START_TIMEOUT_MS, () => child.exitCode !== null || child.signalCode !== null);
    } catch (error) {
      // Whatever it is doing, it goes: a process left running keeps the jest worker from exiting.
      await service.kill9();
      const message = `${name} did not become ready: ${(error as Error).message}\n--- output ---\n${printed}`;
      throw /EADDRINUSE/.test(printed) ? new PortTaken(message) : new Error(message);
    }
  }
  return service;
}

/**
 * How long a service may take to answer its ready URL: a start takes a second or two alone, and over
 * 20 s on a loaded 2-core machine running the e2e tier in parallel; a hang still fails, at a minute.
 * The e2e tier's timeout (tests/support/jest) leaves room for a stack of three such starts.
 */
export const START_TIMEOUT_MS = 60_000;

/** Each probe's own limit: a server that takes the connection and never answers must not outlast the deadline. */
const PROBE_TIMEOUT_MS = 2_000;

export async function waitForHttp(url: string, timeoutMs: number, gaveUp: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (gaveUp()) throw new Error('process exited');
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, Math.min(PROBE_TIMEOUT_MS, deadline - Date.now()))) });
      await response.body?.cancel();
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url}: ${last} after ${timeoutMs} ms`);
}
