/**
 * What the two parts of `ops/compose-smoke.sh` (compose-smoke.ts, compose-postgres-smoke.ts) share: the
 * scripted model the containers reach on this host, the image's build network, progress lines, and the
 * run itself, which prints the stack's logs when it fails and takes the project down whatever happened.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { scriptedMemoryModel } from './compose-conversation.js';
import { ScriptedHttpServer } from './scripted-http.js';

export interface SmokeUpstream {
  /** The relay's port: containers reach the model at host.docker.internal on it. */
  readonly port: number;
  close(): Promise<void>;
}

/** The scripted model on loopback, and a relay to it on every interface, where containers reach it. */
export async function startSmokeUpstream(): Promise<SmokeUpstream> {
  const upstream = await ScriptedHttpServer.start((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(scriptedMemoryModel(request)));
  });
  const toPort = Number(new URL(upstream.url).port);
  const server: Server = createServer((socket) => {
    const model = connect(toPort, '127.0.0.1');
    socket.pipe(model).pipe(socket);
    socket.on('error', () => model.destroy());
    model.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('relay has no port');
  return {
    port: address.port,
    close: async () => {
      server.close();
      await upstream.close();
    },
  };
}

/**
 * memory's `build` in a smoke's override: ENGRAM_BUILD_NETWORK=host builds the image with the host's
 * network, for machines (like CI's) where that is the only way out; the compose files stay as users get
 * them. Only memory builds, the other services use its image.
 */
export function memoryBuild(): { build?: { network: string } } {
  const network = process.env['ENGRAM_BUILD_NETWORK'];
  return network ? { build: { network } } : {};
}

export interface SmokeSteps {
  /** Prints `<name>: what (N s)`, N the seconds since smokeSteps was called. */
  step(what: string): void;
  /** The seconds since smokeSteps was called, as `N s`. */
  elapsed(): string;
}

export function smokeSteps(name: string): SmokeSteps {
  const started = Date.now();
  const elapsed = (): string => `${Math.round((Date.now() - started) / 1000)} s`;
  return { elapsed, step: (what) => void process.stdout.write(`${name}: ${what} (${elapsed()})\n`) };
}

export interface SmokeStack {
  /** `docker compose …` on the smoke's project, returning what it printed. */
  readonly compose: (...args: string[]) => string;
  /** The image tag of this run. */
  readonly image: string;
  readonly upstream: SmokeUpstream;
  /** The run's scratch folder. */
  readonly dir: string;
}

/**
 * Runs `body`; when it throws, prints why and the stack's last log lines. Then, whatever happened, takes
 * the compose project down with its volumes, removes the run's image, the upstream and the scratch
 * folder, and ends the process: exit code 1 when the body failed.
 */
export async function runSmoke(name: string, stack: SmokeStack, body: () => Promise<void>): Promise<never> {
  let failed = false;
  try {
    await body();
  } catch (error) {
    failed = true;
    process.stderr.write(`${name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.stderr.write(stack.compose('logs', '--no-color', '--tail', '100'));
  } finally {
    stack.compose('down', '-v', '--remove-orphans');
    spawnSync('docker', ['rmi', stack.image], { stdio: 'ignore' });
    await stack.upstream.close();
    rmSync(stack.dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}
