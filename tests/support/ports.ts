import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports for the processes a test starts, which bind them themselves. A port the kernel picks for
 * `listen(0)` comes from its ephemeral range, the same one every outgoing connection on the machine
 * takes its local port from (each fetch, each Redis connection of every parallel test): such a port
 * could be taken in the moment between choosing it and the process binding it (EADDRINUSE under
 * parallel jest). These come from below that range, at random, never the same one twice in a jest
 * worker, and each was free when handed out; the start helpers choose another and start again
 * should another test's process still win one (see startWithFreshPorts).
 */
const FIRST_PORT = 20_000;
const handedOut = new Set<number>();

function ephemeralStart(): number {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (start !== undefined && Number.isInteger(start) && start > FIRST_PORT + 1_000) return start;
  } catch {
    // Not Linux: the range IANA reserves for ephemeral ports.
  }
  return 49_152;
}

const PAST_LAST_PORT = ephemeralStart();

/** A TCP port on 127.0.0.1 that was free a moment ago, outside the ephemeral range, not handed out before by this process. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = randomInt(FIRST_PORT, PAST_LAST_PORT);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found between ${FIRST_PORT} and ${PAST_LAST_PORT - 1}`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A start that failed because another process had bound one of its ports first. */
export class PortTaken extends Error {
  override name = 'PortTaken';
}

/**
 * Runs `start` with ports from freePort, and again with new ones (up to three times) when it fails
 * with PortTaken. Only for ports the test did not choose: a restart on the ports a process had before
 * must fail as it is.
 */
export async function startWithFreshPorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 3) throw error;
    }
  }
}
