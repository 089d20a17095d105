import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv, promisify } from 'node:util';
import { parse } from 'yaml';
import { loadConfig } from '@engram/config';
import { freePort } from './ports.js';
import { startService, type ServiceName, type ServiceProcess } from './service-process.js';

const run = promisify(execFile);
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ComposeService {
  readonly image?: string;
  readonly build?: { readonly context: string; readonly dockerfile: string };
  readonly pull_policy?: string;
  readonly extra_hosts?: readonly string[];
  readonly command?: readonly string[];
  readonly environment?: Readonly<Record<string, string | number>>;
  readonly env_file?: readonly { readonly path: string; readonly required?: boolean }[];
  readonly healthcheck?: { readonly test: readonly string[] };
  readonly depends_on?: Readonly<Record<string, { readonly condition: string }>>;
  readonly ports?: readonly string[];
  readonly volumes?: readonly string[];
  readonly restart?: string;
}

export interface ComposeFile {
  readonly name?: string;
  readonly services: Readonly<Record<string, ComposeService>>;
  readonly volumes?: Readonly<Record<string, unknown>>;
}

export function readCompose(): ComposeFile {
  return parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
}

/** `.env.example` as docker compose would read it for `env_file` and `${VAR}` interpolation. */
export function readEnvExample(): Record<string, string> {
  return parseEnv(readFileSync(join(repoRoot, '.env.example'), 'utf8')) as Record<string, string>;
}

/** The `# VAR=value` lines of `.env.example`: documented defaults a person may uncomment. */
export function commentedDefaults(): Record<string, string> {
  const text = readFileSync(join(repoRoot, '.env.example'), 'utf8');
  return Object.fromEntries([...text.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((match) => [match[1], match[2]]));
}

/** `ENV` of the Dockerfile's final stage: the environment every container starts with. */
export function imageEnvironment(): Record<string, string> {
  const text = readFileSync(join(repoRoot, 'ops/Dockerfile'), 'utf8');
  const finalStage = text.slice(text.lastIndexOf('\nFROM '));
  const pairs = [...finalStage.matchAll(/^ENV (.+)$/gm)].flatMap((match) => match[1]!.trim().split(/\s+/));
  return Object.fromEntries(pairs.map((pair) => pair.split('=', 2) as [string, string]));
}

/** Compose's `${VAR}`, `${VAR:-default}`, `${VAR:+replacement}` and `$$` interpolation. */
export function interpolate(value: string, vars: Readonly<Record<string, string>>): string {
  return value.replace(
    /\$\$|\$\{([A-Z0-9_]+)(?::([-+])([^}]*))?\}/g,
    (whole, name: string | undefined, operator: string | undefined, operand: string | undefined) => {
      if (whole === '$$') return '$';
      const value = vars[name!];
      const set = value !== undefined && value !== '';
      if (operator === '+') return set ? operand! : '';
      return set ? value : (operand ?? '');
    },
  );
}

/** Services in an order that satisfies every `depends_on`. */
export function startOrder(compose: ComposeFile): string[] {
  const order: string[] = [];
  const visit = (name: string, path: readonly string[]): void => {
    if (order.includes(name)) return;
    if (path.includes(name)) throw new Error(`depends_on cycle: ${[...path, name].join(' -> ')}`);
    const service = compose.services[name];
    if (!service) throw new Error(`unknown service ${name}`);
    for (const dependency of Object.keys(service.depends_on ?? {})) visit(dependency, [...path, name]);
    order.push(name);
  };
  for (const name of Object.keys(compose.services)) visit(name, []);
  return order;
}

export interface ComposeTopology {
  /** The gateway as a client sees it, e.g. http://127.0.0.1:1234 (no /v1). */
  readonly gatewayUrl: string;
  /** Host directory standing in for each mounted container path, keyed `service:/path` (e.g. 'memory:/data'). */
  readonly volumes: ReadonlyMap<string, string>;
  /** The environment each service was started with, after mapping. */
  readonly environments: ReadonlyMap<string, Readonly<Record<string, string>>>;
  readonly processes: ReadonlyMap<string, ServiceProcess>;
  stop(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';

/**
 * Starts docker-compose.yml's services as processes on this machine: each with its image ENV,
 * the env file (`.env.example` plus `envOverrides`, what a person writes into .env) and its
 * `environment`; service host names and 0.0.0.0 become 127.0.0.1, every container port a free
 * port, every volume a temp dir. Services start in depends_on order, and a dependency counts as
 * started once its own compose healthcheck passes.
 */
export async function startComposeTopology(envOverrides: Readonly<Record<string, string>>): Promise<ComposeTopology> {
  const compose = readCompose();
  const envFile = { ...readEnvExample(), ...envOverrides };
  const serviceNames = Object.keys(compose.services);
  const defaults = loadConfig({});
  const portVariables: Record<string, number> = {
    GATEWAY_PORT: defaults.gateway.port,
    MEMORY_PORT: defaults.memory.port,
    MEMORY_HEALTH_PORT: defaults.memory.healthPort,
    WORKER_HEALTH_PORT: defaults.worker.healthPort,
  };
  const hostPorts = new Map<number, number>();
  for (const containerPort of [6379, ...Object.values(portVariables)]) hostPorts.set(containerPort, await freePort());
  const hostPort = (containerPort: number): number => {
    const mapped = hostPorts.get(containerPort);
    if (mapped === undefined) throw new Error(`container port ${containerPort} is not one Engram's config knows`);
    return mapped;
  };

  const volumes = new Map<string, string>();
  // One temp dir per volume source (named volume or host path): services mounting the same source share it.
  const sources = new Map<string, string>();
  const environments = new Map<string, Record<string, string>>();
  const processes = new Map<string, ServiceProcess>();
  const others: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const name of [...processes.keys()].reverse()) await processes.get(name)!.stop();
    for (const child of others) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
    for (const dir of sources.values()) rmSync(dir, { recursive: true, force: true });
  };

  const mapValue = (service: string, value: string): string => {
    if (value === '0.0.0.0' || serviceNames.includes(value)) return LOOPBACK;
    if (!/^[a-z]+:\/\//.test(value)) return volumes.get(`${service}:${value}`) ?? value;
    const url = new URL(value);
    if (!serviceNames.includes(url.hostname)) return value;
    url.hostname = LOOPBACK;
    url.port = String(hostPort(Number(url.port || (url.protocol.startsWith('redis') ? 6379 : 80))));
    return url.toString().replace(/\/$/, value.endsWith('/') ? '/' : '');
  };

  try {
    for (const name of startOrder(compose)) {
      const service = compose.services[name]!;
      for (const volume of service.volumes ?? []) {
        const [source, containerPath] = interpolate(volume, envFile).split(':') as [string, string];
        // A host folder (a bind mount, e.g. EMBEDDINGS_MODEL_DIR) is itself; a named volume is a fresh temp dir.
        if (source.startsWith('/')) volumes.set(`${name}:${containerPath}`, source);
        else {
          if (!sources.has(source)) sources.set(source, mkdtempSync(join(tmpdir(), `engram-compose-${name}-`)));
          volumes.set(`${name}:${containerPath}`, sources.get(source)!);
        }
      }
      const declared: Record<string, string> = {
        ...(service.image?.startsWith('redis') ? {} : imageEnvironment()),
        ...(service.env_file ? envFile : {}),
        ...Object.fromEntries(Object.entries(service.environment ?? {}).map(([key, value]) => [key, interpolate(String(value), envFile)])),
      };
      const environment: Record<string, string> = {};
      for (const [key, value] of Object.entries(declared)) environment[key] = mapValue(name, value);
      for (const [key, containerPort] of Object.entries(portVariables)) {
        environment[key] = String(hostPort(declared[key] ? Number(declared[key]) : containerPort));
      }
      environments.set(name, environment);

      const command = (service.command ?? []).map((part) => interpolate(part, envFile));
      const app = /^apps\/([a-z]+)\/dist\/(.+)$/.exec(command[1] ?? '');
      if (command[0] === 'node' && app) {
        processes.set(name, await startService(app[1] as ServiceName, environment, { entry: app[2]! }));
      } else if (command[0] === 'redis-server') {
        const redisDir = volumes.get(`${name}:/data`) ?? mkdtempSync(join(tmpdir(), 'engram-compose-redis-'));
        const child = spawn('redis-server', [...command.slice(1), '--port', String(hostPort(6379)), '--bind', LOOPBACK, '--dir', redisDir], {
          stdio: 'ignore',
        });
        others.push(child);
      } else {
        throw new Error(`service ${name}: no way to run ${JSON.stringify(command)} outside Docker`);
      }
      await waitForHealthcheck(name, service, hostPort, processes.get(name));
    }
  } catch (error) {
    await stop();
    throw error;
  }

  const published = compose.services['gateway']?.ports?.[0]?.split(':').at(-1);
  return {
    gatewayUrl: `http://${LOOPBACK}:${hostPort(Number(published ?? defaults.gateway.port))}`,
    volumes,
    environments,
    processes,
    stop,
  };
}

/** Runs the service's own compose healthcheck (with the mapped port) until it passes. */
async function waitForHealthcheck(
  name: string,
  service: ComposeService,
  hostPort: (containerPort: number) => number,
  process: ServiceProcess | undefined,
): Promise<void> {
  const test = service.healthcheck?.test;
  if (!test || test[0] !== 'CMD') throw new Error(`service ${name} has no exec-form healthcheck`);
  let [command, ...args] = test.slice(1);
  if (command === 'redis-cli') args = ['-p', String(hostPort(6379)), ...args];
  if (command === 'node') command = globalThis.process.execPath;
  args = args.map((arg) => arg.replace(/:(\d+)\//, (_, port: string) => `:${hostPort(Number(port))}/`));
  const deadline = Date.now() + 30_000;
  let last = '';
  while (Date.now() < deadline) {
    if (process && process.child.exitCode !== null) break;
    try {
      await run(command!, args, { cwd: repoRoot, timeout: 5_000 });
      return;
    } catch (error) {
      last = (error as { stderr?: string }).stderr || (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name}: healthcheck ${JSON.stringify(test)} did not pass: ${last}\n--- output ---\n${process?.output() ?? ''}`);
}
