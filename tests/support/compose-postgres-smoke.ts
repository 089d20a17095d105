/**
 * `ops/compose-smoke.sh`, second part: the README's "More than one machine" under Docker (project
 * `engram-cluster-smoke`, own volumes, gateway on a free port), its lines run as written where they can
 * be. A home server first (docker-compose.yml alone) that stores a fact in its file log; then moved to
 * PostgreSQL: services stopped, only postgres up, `engram log copy` into it; then docker-compose.yml with
 * docker-compose.postgres.yml: PostgreSQL, two memory replicas (the second built from the table), the
 * worker and the gateway, the password and the internal token from an env file as a person's .env.
 * A conversation; the replica serving its pool stopped; the conversation goes on and what it stored is
 * still found; a fact stored meanwhile is on the stopped replica once it is back. Last, the table backed
 * up with pg_dump and restored into an empty database, and the replicas started on it. Then everything down.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strict as assert } from 'node:assert';
import { ReplicaSet } from '@engram/contracts';
import { repoRoot } from './compose.js';
import { DEPLOY_FACT, storeThenRecall } from './compose-conversation.js';
import { memoryBuild, runSmoke, smokeSteps, startSmokeUpstream } from './compose-smoke-run.js';
import { freePort } from './ports.js';
import { readmeCommands } from './readme.js';

const project = 'engram-cluster-smoke';
const REPLICAS = ['memory', 'memory-2'] as const;
const LATER_FACT = 'The staging database is restored every monday';

const upstream = await startSmokeUpstream();
const gatewayPort = await freePort();
const gateway = `http://127.0.0.1:${gatewayPort}`;
const dir = mkdtempSync(join(tmpdir(), 'engram-cluster-smoke-'));
// What a person's .env holds for this file (.env.example, "More than one machine").
const envFile = join(dir, '.env');
writeFileSync(
  envFile,
  [
    // Characters a URL would need encoded: the replicas take it as PGPASSWORD.
    `POSTGRES_PASSWORD=p@ss/w:rd%#?${randomBytes(12).toString('hex')}`,
    `ENGRAM_INTERNAL_TOKEN=${randomBytes(32).toString('hex')}`,
    `UPSTREAM_BASE_URL=http://host.docker.internal:${upstream.port}/v1`,
    'UPSTREAM_API_KEY=sk-upstream',
    `ENGRAM_PORT=${gatewayPort}`,
    '',
  ].join('\n'),
);
const override = join(dir, 'smoke.override.yml');
// The env file is read for ${} interpolation only; the containers get the upstream from this override.
const upstreamEnv = { UPSTREAM_BASE_URL: `http://host.docker.internal:${upstream.port}/v1`, UPSTREAM_API_KEY: 'sk-upstream' };
writeFileSync(
  override,
  JSON.stringify({
    services: {
      memory: memoryBuild(),
      gateway: { environment: upstreamEnv },
      worker: { environment: upstreamEnv },
    },
  }),
);
const image = `engram-cluster-smoke:${process.pid}`;
const composeEnv = { ...process.env, COMPOSE_PROJECT_NAME: project, ENGRAM_IMAGE: image };
const composeWith =
  (...files: string[]) =>
  (...args: string[]): string =>
    execFileSync('docker', ['compose', ...files.flatMap((file) => ['-f', file]), '--env-file', envFile, ...args], {
      cwd: repoRoot,
      env: composeEnv,
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
const compose = composeWith('docker-compose.yml', 'docker-compose.postgres.yml', override);
/** The same project as a home server runs it, before the move. */
const homeServer = composeWith('docker-compose.yml', override);
const secrets = Object.fromEntries(
  readFileSync(envFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);

/** A command the README gives in its prose (`…`), found by `pattern`. */
const readmeInline = (pattern: RegExp): string => {
  const found = [...readFileSync(join(repoRoot, 'README.md'), 'utf8').matchAll(/`([^`\n]+)`/g)]
    .map((match) => match[1]!)
    .find((code) => pattern.test(code));
  assert.ok(found, `the README lost its line matching ${pattern}`);
  return found;
};
/**
 * A README line as a person runs it in the clone, with .env's values in the environment and plain
 * `docker compose` acting on `files` (this run's override after the README's own files).
 */
const readmeLine = (command: string, files: readonly string[], cwd = repoRoot): string => {
  process.stdout.write(`$ ${command}\n`);
  return execFileSync('sh', ['-c', command], {
    cwd,
    env: { ...composeEnv, ...secrets, COMPOSE_FILE: [...files.map((file) => join(repoRoot, file)), override].join(':') },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
};

const { step } = smokeSteps('compose-postgres-smoke');

interface Readyz {
  readonly checks: { readonly memory: string };
  readonly memoryReplicas: readonly { readonly address: string; readonly state: string }[];
}
const readyz = async (): Promise<{ status: number; body: Readyz }> => {
  const response = await fetch(`${gateway}/readyz`);
  return { status: response.status, body: (await response.json()) as Readyz };
};
const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
};
/** What the gateway's search of the default pool finds for `q`. */
const search = async (q: string): Promise<string[]> => {
  const response = await fetch(`${gateway}/engram/pools/default/memories?q=${encodeURIComponent(q)}`);
  assert.equal(response.status, 200, `search ${q}`);
  return ((await response.json()) as { data: { content: string }[] }).data.map((entry) => entry.content);
};
/** What replica `service` itself holds of the default pool (its own read model). */
const heldBy = (service: string): string => compose('exec', '-T', service, 'npx', 'engram', 'export', '--pool', 'default', '--format', 'json');

await runSmoke('compose-postgres-smoke', { compose, image, upstream, dir }, async () => {
  step('building the image and bringing up a home server (docker-compose.yml alone): a conversation stores a fact in its file log');
  homeServer('up', '-d', '--wait', '--wait-timeout', '240');
  assert.equal((await storeThenRecall(gateway)).recallAnswer, 'With docker compose, on your NAS.');
  assert.match(homeServer('exec', '-T', 'memory', 'npx', 'engram', 'export', '--pool', 'default', '--format', 'json'), new RegExp(DEPLOY_FACT));

  step('moving it to PostgreSQL as the README says: the services stopped, only postgres up, engram log copy into it');
  homeServer('stop');
  compose('up', '-d', '--wait', '--wait-timeout', '120', 'postgres');
  const logCopy = readmeInline(
    /^docker compose run --rm --no-deps -e PGPASSWORD='<password>' memory npx engram log copy --to postgres:\/\/engram@postgres:5432\/engram$/,
  );
  const copied = readmeLine(logCopy.replace('<password>', secrets['POSTGRES_PASSWORD']!), ['docker-compose.yml']);
  process.stdout.write(copied);
  assert.match(copied, /^copied [1-9]\d* events from \/data to /);

  step("bringing PostgreSQL, two memory replicas, the worker and the gateway up (the README's line)");
  const upLine = readmeCommands().find((line) => line.includes('-f docker-compose.postgres.yml') && line.endsWith(' up -d'));
  assert.ok(upLine, "the README lost its line 'docker compose -f docker-compose.yml -f docker-compose.postgres.yml up -d'");
  process.stdout.write(`$ ${upLine}\n`);
  // The README's line as this run needs it: its env file (a person's .env), the upstream override, waiting for health.
  execFileSync('sh', ['-c', upLine.replace(/ up -d$/, ` -f ${override} --env-file ${envFile} up -d --wait --wait-timeout 240`)], {
    cwd: repoRoot,
    env: composeEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // The home server's gateway was recreated: a kept-alive connection to it is gone, so ask until one answers.
  await waitFor('the gateway to answer /readyz', async () => (await readyz()).status === 200);
  const ready = await readyz();
  assert.deepEqual(
    ready.body.memoryReplicas.map(({ address, state }) => [address, state]),
    [
      ['memory:4001', 'up'],
      ['memory-2:4001', 'up'],
    ],
  );

  // What the home server stored: memory-2's data dir is new and built itself from the table.
  for (const service of REPLICAS) await waitFor(`${service} to hold the copied fact`, () => Promise.resolve(heldBy(service).includes(DEPLOY_FACT)));

  step('a conversation: store, then recall through Tier 1');
  assert.equal((await storeThenRecall(gateway)).recallAnswer, 'With docker compose, on your NAS.');
  for (const service of REPLICAS) await waitFor(`${service} to hold the fact`, () => Promise.resolve(heldBy(service).includes(DEPLOY_FACT)));

  // The replica the default pool's calls go to, as the gateway chooses it: the one the README's line stops.
  const serving = new ReplicaSet(REPLICAS.map((service) => ({ address: `${service}:4001`, service }))).order('default')[0]!.service;
  assert.equal(serving, 'memory', 'the default pool is served by memory, the replica the README stops');
  const other = REPLICAS.find((service) => service !== serving)!;
  const stopLine = readmeInline(/^docker compose -f docker-compose\.yml -f docker-compose\.postgres\.yml stop memory$/);
  step(`stopping ${serving}, the replica serving the default pool (the README's line)`);
  readmeLine(stopLine, []);
  const degraded = await readyz();
  assert.equal(degraded.status, 200, 'the gateway is ready while one replica answers');
  assert.deepEqual(
    degraded.body.memoryReplicas.map(({ address, state }) => [address.split(':')[0], state]),
    REPLICAS.map((service) => [service, service === serving ? 'down' : 'up']),
  );

  step(`the conversation goes on, served by ${other}`);
  assert.equal((await storeThenRecall(gateway)).recallAnswer, 'With docker compose, on your NAS.');
  assert.ok((await search('docker compose')).includes(DEPLOY_FACT), 'the stored fact is found with one replica stopped');
  const later = await fetch(`${gateway}/engram/pools/default/memories`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'cluster-smoke-later' },
    body: JSON.stringify({ content: LATER_FACT }),
  });
  assert.equal(later.status, 201, 'a store with one replica stopped');
  assert.ok((await search('staging database')).includes(LATER_FACT));

  step(`starting ${serving} again (the README's start memory): it catches up on what was stored meanwhile`);
  readmeLine(stopLine.replace(/ stop memory$/, ' start memory'), []);
  await waitFor('both replicas up in /readyz', async () => (await readyz()).body.memoryReplicas.every(({ state }) => state === 'up'), 180_000);
  await waitFor(`${serving} to hold the later fact`, () => Promise.resolve(heldBy(serving).includes(LATER_FACT)));
  assert.ok((await search('staging database')).includes(LATER_FACT), `the later fact through ${serving}`);
  assert.ok((await search('docker compose')).includes(DEPLOY_FACT));
  step('the cluster kept every memory across a stopped replica');

  step("backing the table up with the README's pg_dump, restoring it into an empty database with its pg_restore");
  const dump = readmeInline(/^pg_dump -Fc engram > engram\.dump$/);
  const restore = readmeInline(/^pg_restore -d engram engram\.dump$/);
  // In the postgres container, as its superuser, in a folder of its own.
  const inPostgres = (command: string): string => compose('exec', '-T', '-e', 'PGUSER=engram', '-w', '/tmp', 'postgres', 'sh', '-c', command);
  // Nothing writes after the dump (a replica whose copy held an event the restored table lacks would rightly refuse to start).
  compose('stop', 'gateway', 'worker');
  inPostgres(dump);
  compose('stop', ...REPLICAS);
  inPostgres('dropdb engram && createdb engram');
  inPostgres(restore);
  assert.match(inPostgres("psql -tA -c 'SELECT count(*) FROM events'"), /^[1-9]\d*\n$/);
  compose('up', '-d', '--wait', '--wait-timeout', '240');
  await waitFor('the restarted gateway to answer /readyz', async () => (await readyz()).status === 200);
  for (const service of REPLICAS) assert.ok(heldBy(service).includes(LATER_FACT), `${service} on the restored table`);
  assert.ok((await search('staging database')).includes(LATER_FACT), 'the later fact after the restore');
  assert.ok((await search('docker compose')).includes(DEPLOY_FACT), 'the first fact after the restore');
  step('the cluster came back from a pg_dump restored into an empty database');
});
