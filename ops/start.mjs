// `npm start`: memory, worker and gateway on this machine, without Docker.
// `node ops/start.mjs gateway` starts only the named services (npm run start:gateway, ...).
// Logs are prefixed by service, a crashed service is restarted, Ctrl-C stops them all.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { createInterface } from 'node:readline';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';

const SERVICES = ['memory', 'worker', 'gateway'];
const STOP_GRACE_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A service that ran this long before crashing restarts without delay growth. */
const HEALTHY_RUN_MS = 30_000;
const MEMORY_READY_TIMEOUT_MS = 60_000;

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const width = Math.max(...SERVICES.map((name) => name.length), 'engram'.length);

function say(line) {
  process.stdout.write(`${'engram'.padEnd(width)} | ${line}\n`);
}

/** One line on stderr, then exit: used for mistakes the person running this can fix. */
function fail(line) {
  process.stderr.write(`engram: ${line}\n`);
  process.exit(1);
}

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !SERVICES.includes(name));
if (unknown.length > 0) fail(`unknown service ${unknown.join(', ')}; choose from ${SERVICES.join(', ')}`);
const selected = requested.length > 0 ? SERVICES.filter((name) => requested.includes(name)) : SERVICES;

// The same .env as docker compose; variables already in the environment win.
if (existsSync('.env')) process.loadEnvFile('.env');

const { loadConfig } = await import('@engram/config').catch(() =>
  fail('the apps are not built yet: run `npm start` (it builds first) or `npm run build`'),
);
let config;
try {
  config = loadConfig(process.env);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

const redisProblem = await pingRedis(config.redisUrl);
if (redisProblem) {
  fail(
    `no Redis answers at ${redact(config.redisUrl)} (${redisProblem}); start one with ` +
      '`docker run -d --name engram-redis -p 6379:6379 redis:7-alpine` (or `sudo apt-get install redis-server`), ' +
      'or set REDIS_URL in .env',
  );
}

/** Sends PING; any Redis reply (PONG, or an auth error) means a Redis answers. Returns the problem, or null. */
function pingRedis(url) {
  const { hostname, port, protocol } = new URL(url);
  const options = { host: hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port: Number(port || 6379) };
  return new Promise((resolve) => {
    const socket = protocol === 'rediss:' ? tlsConnect({ ...options, servername: options.host }) : createConnection(options);
    const done = (problem) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(3_000, () => done('no answer within 3 s'));
    socket.once(protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(/^[+-]/.test(data.toString()) ? null : 'the server there does not speak Redis'));
    socket.once('error', (error) => done(error.code ?? error.message));
  });
}

function redact(url) {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString().replace(/\/$/, '');
}

/** Each supervised service: its current child, and how often it crashed in a row. */
const running = new Map();
let stopping = false;

function launch(name) {
  const startedAt = Date.now();
  const child = spawn(process.execPath, [`${repoRoot}apps/${name}/dist/main.js`], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: Ctrl-C reaches only this supervisor, which stops the services in order.
    detached: true,
  });
  const state = running.get(name) ?? { crashes: 0 };
  running.set(name, { ...state, child, startedAt });
  say(`${name} started (pid ${child.pid})`);
  for (const [stream, sink] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => sink.write(`${name.padEnd(width)} | ${line}\n`));
  }
  child.once('exit', (code, signal) => {
    const current = running.get(name);
    if (current?.child !== child) return;
    current.child = undefined;
    if (stopping) return;
    const crashes = Date.now() - startedAt > HEALTHY_RUN_MS ? 1 : current.crashes + 1;
    current.crashes = crashes;
    const delay = Math.min(MAX_RESTART_DELAY_MS, 1_000 * 2 ** (crashes - 1));
    say(`${name} exited (${signal ?? `code ${code}`}); restarting in ${delay / 1_000} s`);
    // Not unref()'d: with one service (start:memory) this timer is all that keeps the supervisor alive.
    current.restartTimer = setTimeout(() => {
      current.restartTimer = undefined;
      if (!stopping) launch(name);
    }, delay);
  });
}

async function waitForMemory() {
  const url = `http://127.0.0.1:${config.memory.healthPort}/healthz`;
  const deadline = Date.now() + MEMORY_READY_TIMEOUT_MS;
  while (!stopping && Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!stopping) say(`memory is not healthy at ${url} after ${MEMORY_READY_TIMEOUT_MS / 1_000} s; starting the others anyway`);
}

function stopOne(name) {
  const child = running.get(name)?.child;
  if (!child) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      say(`${name} did not stop within ${STOP_GRACE_MS / 1_000} s; killing it`);
      child.kill('SIGKILL');
    }, STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function stopAll(signal) {
  if (stopping) {
    say(`${signal} again: killing every service now`);
    for (const { child } of running.values()) child?.kill('SIGKILL');
    process.exit(130);
  }
  stopping = true;
  for (const state of running.values()) clearTimeout(state.restartTimer);
  say(`${signal}: stopping ${selected.join(', ')}`);
  // Callers first, so nothing asks memory for work while it shuts down.
  await Promise.all(['gateway', 'worker'].map(stopOne));
  await stopOne('memory');
  say('stopped');
  process.exit(0);
}

process.on('SIGINT', () => void stopAll('SIGINT'));
process.on('SIGTERM', () => void stopAll('SIGTERM'));
process.on('SIGHUP', () => void stopAll('SIGHUP'));
// Never leave orphans behind, even when this process dies of an error.
process.on('exit', () => {
  for (const { child } of running.values()) child?.kill('SIGKILL');
});

if (selected.includes('memory')) {
  launch('memory');
  if (selected.length > 1) await waitForMemory();
}
for (const name of selected.filter((name) => name !== 'memory')) {
  if (!stopping) launch(name);
}
