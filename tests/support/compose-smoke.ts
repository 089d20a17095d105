/**
 * `ops/compose-smoke.sh`: the real stack under Docker. Builds the image, brings docker-compose.yml
 * up as project `engram-smoke` (its own volumes, gateway on a free port, upstream = a scripted
 * model on this host), runs the same store-then-recall conversation as the topology test, then
 * every `docker compose` and `ops/` line of the README in order (backup and restore through the
 * memory container, logs),
 * then takes everything down again. It runs encrypted at rest, with the key as the compose secret of the
 * README's `docker-compose.override.yml`: no file of the data volume may hold the stored fact.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strict as assert } from 'node:assert';
import { repoRoot } from './compose.js';
import { DEPLOY_FACT, STORE_REQUEST_ID, storeThenRecall } from './compose-conversation.js';
import { memoryBuild, runSmoke, smokeSteps, startSmokeUpstream } from './compose-smoke-run.js';
import { freePort } from './ports.js';
import { readmeBlocks, readmeCommands } from './readme.js';
import { EncryptionKey } from '@engram/config';
import { writeSentenceEncoder } from '@engram/testing';
import { parse } from 'yaml';

const project = 'engram-smoke';

const upstream = await startSmokeUpstream();
const gatewayPort = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'engram-smoke-'));
const override = join(dir, 'smoke.override.yml');
/** The README's `.env` line for a model server on the host (Ollama), pointed at the scripted model's relay. */
const ollamaLine = readmeBlocks()
  .flatMap((block) => block.text.split('\n'))
  .find((line) => /^UPSTREAM_BASE_URL=http:\/\/host\.docker\.internal:11434\/v1$/.test(line));
assert.ok(ollamaLine, 'the README lost its Ollama line (UPSTREAM_BASE_URL=http://host.docker.internal:11434/v1)');
// Hybrid search in-process: a generated model folder on the host, as a person's .env names theirs; the
// image's user (uid 1000) must be able to read it.
const modelDir = join(dir, 'model');
mkdirSync(modelDir);
writeSentenceEncoder(modelDir, { maxSeqLength: 64 });
chmodSync(dir, 0o755);
const upstreamEnv = {
  // Reached through docker-compose.yml's own extra_hosts: this override adds none.
  UPSTREAM_BASE_URL: ollamaLine.slice('UPSTREAM_BASE_URL='.length).replace(':11434/', `:${upstream.port}/`),
  UPSTREAM_API_KEY: 'sk-upstream',
  ENGRAM_API_KEYS: '',
};
// The README's compose secret for the at-rest key, pointed at a key of this run (readable by the image's uid 1000).
const keyFile = join(dir, 'engram.key');
writeFileSync(keyFile, `${EncryptionKey.generate()}\n`, { mode: 0o400 });
if (process.getuid?.() === 0) chownSync(keyFile, 1000, 1000);
else chmodSync(keyFile, 0o444);
const secretBlock = readmeBlocks().find((block) => block.lang === 'yaml' && block.text.includes('ENGRAM_ENCRYPTION_KEY_FILE'));
assert.ok(secretBlock, "the README lost its docker-compose.override.yml with the key's compose secret");
const keySecret = parse(secretBlock.text) as {
  services: Record<string, { secrets: string[]; environment: Record<string, string> }>;
  secrets: Record<string, { file: string }>;
};
for (const secret of Object.values(keySecret.secrets)) secret.file = keyFile;
// memory's /metrics, read below: the internal token file is sealed now.
const METRICS_TOKEN = 'smoke-metrics-token';
writeFileSync(
  override,
  JSON.stringify({
    services: {
      memory: {
        ...memoryBuild(),
        secrets: keySecret.services['memory']?.secrets,
        environment: { ...keySecret.services['memory']?.environment, METRICS_TOKEN },
      },
      ...Object.fromEntries(
        ['gateway', 'worker'].map((name) => [
          name,
          { secrets: keySecret.services[name]?.secrets, environment: { ...upstreamEnv, ...keySecret.services[name]?.environment } },
        ]),
      ),
    },
    secrets: keySecret.secrets,
  }),
);
// An image tag of this run's own, absent until the first `docker compose up` builds it, as on a fresh machine.
const image = `engram-smoke:${process.pid}`;
// COMPOSE_* make the README's plain `docker compose ...` lines act on this project and override.
const composeEnv = {
  ...process.env,
  COMPOSE_PROJECT_NAME: project,
  COMPOSE_FILE: ['docker-compose.yml', override].join(':'),
  ENGRAM_PORT: String(gatewayPort),
  ENGRAM_DATA_LOCATION: 'engram-data',
  ENGRAM_IMAGE: image,
  EMBEDDINGS_MODEL_DIR: modelDir,
};
const compose = (...args: string[]): string =>
  execFileSync('docker', ['compose', ...args], { cwd: repoRoot, env: composeEnv, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

/** A README line as a person runs it, in a scratch folder (so `./backups` lands there). */
const readmeLine = (command: string): string => {
  process.stdout.write(`$ ${command}\n`);
  return execFileSync('sh', ['-c', command.replaceAll('<id>', STORE_REQUEST_ID)], {
    cwd: dir,
    env: { ...composeEnv, COMPOSE_PROJECT_DIRECTORY: repoRoot, COMPOSE_FILE: [join(repoRoot, 'docker-compose.yml'), override].join(':') },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
};

const { step, elapsed } = smokeSteps('compose-smoke');

/** Overwrites the second page of engram.db in the volume, as a failing disk would. */
const corruptDatabase = (): void => {
  compose('stop', 'gateway', 'worker', 'memory');
  compose(
    'run',
    '--rm',
    '--no-deps',
    '-T',
    'memory',
    'node',
    '-e',
    "const fs = require('node:fs'); const fd = fs.openSync('/data/engram.db', 'r+'); fs.writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096);",
  );
};
const engram = (...args: string[]): string => compose('run', '--rm', '--no-deps', '-T', 'memory', 'npx', 'engram', ...args);
const assertRemembered = (): void =>
  assert.match(compose('exec', '-T', 'memory', 'npx', 'engram', 'export', '--pool', 'default', '--format', 'json'), new RegExp(DEPLOY_FACT));

/** Encrypted at rest: the flat file is sealed, and no file of the data volume holds the fact (grep finds none). */
const assertSealed = (): void => {
  assert.match(compose('exec', '-T', 'memory', 'head', '-c', '16', '/data/pools/default/USER.md'), /^engram-sealed-v\d/);
  const clear = compose('exec', '-T', 'memory', 'sh', '-c', `grep -rlF '${DEPLOY_FACT}' /data || true`).trim();
  assert.equal(clear, '', `files of the data volume hold the stored fact in the clear: ${clear}`);
};

/** ops/RECOVERY.md section 1 under Docker: memory rebuilds a corrupted database at start, and a person can by hand. */
function recoverCorruptedDatabase(): void {
  step('corrupting engram.db in the volume; memory must rebuild it from the log when it starts');
  corruptDatabase();
  compose('up', '-d', '--wait', '--wait-timeout', '180');
  assert.match(compose('logs', '--no-color', 'memory'), /moved it aside, rebuilding from the event log/);
  assertRemembered();

  step('corrupting it again; engram verify must notice, replay repair it (docker compose run --rm --no-deps memory)');
  corruptDatabase();
  const failedVerify = spawnSync('docker', ['compose', 'run', '--rm', '--no-deps', '-T', 'memory', 'npx', 'engram', 'verify'], {
    cwd: repoRoot,
    env: composeEnv,
    encoding: 'utf8',
  });
  process.stdout.write(failedVerify.stdout);
  assert.equal(failedVerify.status, 1, 'engram verify must fail on a corrupted database');
  assert.match(failedVerify.stdout, /FAILED: \/data\n\s+- database/);
  process.stdout.write(engram('replay'));
  assert.match(engram('verify'), /^ok: /);
  compose('up', '-d', '--wait', '--wait-timeout', '180');
  assertRemembered();
}

/**
 * A memory search through the gateway carrying `id` as its x-request-id (gateway and memory both log it),
 * once the recreated gateway answers: the README's lines start containers without waiting for them.
 */
async function requestWithId(id: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${gatewayPort}/engram/pools/default/memories?q=docker`, { headers: { 'x-request-id': id } });
      if (response.status === 200) return;
      if (Date.now() > deadline) assert.fail(`a search with request id ${id} answered ${response.status}`);
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * The README's first `docker compose up -d` on a machine without the image: built once (by memory, the
 * others use it), never pulled from a registry first (engram images exist only where they are built).
 */
function firstUp(): void {
  const up = spawnSync('docker', ['compose', 'up', '-d', '--wait', '--wait-timeout', '180'], { cwd: repoRoot, env: composeEnv, encoding: 'utf8' });
  const output = `${up.stdout}${up.stderr}`;
  process.stdout.write(output);
  assert.equal(up.status, 0, 'docker compose up -d failed');
  assert.doesNotMatch(output, /Pulling|pull access denied|registry-1\.docker\.io/, 'docker compose up tried to pull an image');
  const [name, tag] = image.split(':');
  assert.equal(output.match(new RegExp(`naming to docker\\.io/library/${name}:${tag} `, 'g'))?.length, 1, 'the image must be built once');
  assert.match(execFileSync('docker', ['images', '-q', image], { encoding: 'utf8' }), /\w/);
}

/** The image runs ONNX Runtime: memory embedded a search's query and fused it with words, the worker embedded the stored fact. */
async function assertHybridInProcess(): Promise<void> {
  assert.match(compose('logs', '--no-color', 'memory'), /"in":"process".*hybrid search: embedding queries/);
  assert.match(compose('logs', '--no-color', 'worker'), /"embeddings":\{"model":"onnx-[0-9a-f]{16}"/);
  const metrics = (): string =>
    compose(
      'exec',
      '-T',
      'memory',
      'node',
      '-e',
      `fetch('http://127.0.0.1:4002/metrics', { headers: { authorization: 'Bearer ${METRICS_TOKEN}' } }).then((r) => r.text()).then((t) => process.stdout.write(t))`,
    );
  const deadline = Date.now() + 60_000;
  for (;;) {
    await fetch(`http://127.0.0.1:${gatewayPort}/engram/pools/default/memories?q=${encodeURIComponent('where does it run')}`);
    if (/engram_memory_hybrid_searches_total\{outcome="hybrid"\} [1-9]/.test(metrics())) return;
    if (Date.now() > deadline) assert.fail(`no hybrid search in memory's metrics:\n${metrics()}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

await runSmoke('compose-smoke', { compose, image, upstream, dir }, async () => {
  step('building the image and bringing the stack up');
  firstUp();
  step('stack healthy; running the conversation');
  const outcome = await storeThenRecall(`http://127.0.0.1:${gatewayPort}`);
  assert.deepEqual(outcome, {
    storeAnswer: 'Noted.',
    storeToolCalls: [],
    storeRequestId: STORE_REQUEST_ID,
    recallAnswer: 'With docker compose, on your NAS.',
  });
  assertRemembered();
  assertSealed();
  for (const service of ['memory', 'worker', 'gateway']) {
    // A non-root user on a read-only root filesystem, with a writable /tmp (and /data for memory).
    assert.equal(compose('exec', '-T', service, 'id', '-un').trim(), 'node', service);
    assert.throws(() => compose('exec', '-T', service, 'sh', '-c', 'touch $HOME/probe 2>/dev/null'), `${service}: root filesystem is writable`);
    compose('exec', '-T', service, 'touch', '/tmp/probe');
  }
  compose('exec', '-T', 'memory', 'sh', '-c', 'touch /data/probe && rm /data/probe');
  step('checking that memory and the worker embed in-process with the mounted model folder');
  await assertHybridInProcess();
  // Published on every interface without ENGRAM_API_KEYS: the gateway says so.
  assert.match(compose('logs', '--no-color', 'gateway'), /ENGRAM_API_KEYS is empty and the gateway listens on 0\.0\.0\.0/);
  assert.equal(((await (await fetch(`http://127.0.0.1:${gatewayPort}/readyz`)).json()) as { auth?: string }).auth, 'open');
  step("running the README's docker compose and ops/ lines");
  // The lines with docker-compose.postgres.yml are the cluster's: tests/support/compose-postgres-smoke.ts runs them.
  const singleBox = (line: string): boolean => !line.includes('docker-compose.postgres.yml');
  for (const command of readmeCommands().filter((line) => (line.startsWith('docker compose ') || line.startsWith('ops/')) && singleBox(line))) {
    // `docker compose up -d` and ops/restore.sh recreate the containers, and their logs go with them: the
    // README's log search then looks for a request made since, as a person follows a fresh request's id.
    if (command.includes('<id>')) await requestWithId(STORE_REQUEST_ID);
    readmeLine(command.replace(/^ops\//, `${repoRoot}ops/`));
  }
  compose('up', '-d', '--wait', '--wait-timeout', '180');
  assertRemembered();
  assertSealed();
  // ops/backup.sh and ops/restore.sh leave no copy of a backup in the volume, where a purge would not reach it.
  assert.equal(compose('exec', '-T', 'memory', 'sh', '-c', 'ls -A /data/backups 2>/dev/null || true').trim(), '');
  recoverCorruptedDatabase();
  process.stdout.write(
    `compose-smoke: the stack came up healthy, encrypted at rest, remembered across turns and recovered its database (${elapsed()})\n`,
  );
});
