import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, tempDataDir, writeSentenceEncoder } from '@engram/testing';
import { loadConfig } from '@engram/config';
import {
  commentedDefaults,
  imageEnvironment,
  interpolate,
  readCompose,
  readEnvExample,
  repoRoot,
  startComposeTopology,
  type ComposeTopology,
} from '../support/compose.js';
import { DEPLOY_FACT, scriptedMemoryModel, STORE_REQUEST_ID, storeThenRecall } from '../support/compose-conversation.js';
import { ScriptedHttpServer } from '../support/scripted-http.js';

describe('docker-compose.yml, run as local processes', () => {
  it('describes the topology the issue asks for', () => {
    const compose = readCompose();
    const { redis, memory, worker, gateway } = compose.services;
    expect(Object.keys(compose.services).sort()).toEqual(['gateway', 'memory', 'redis', 'worker']);
    expect(redis?.command).toEqual(expect.arrayContaining(['--appendonly', 'yes']));
    expect(redis?.volumes?.some((volume) => volume.endsWith(':/data'))).toBe(true);

    // One image, built once by memory (worker and gateway wait for it), never pulled from a registry.
    expect(memory?.build).toEqual({ context: '.', dockerfile: 'ops/Dockerfile' });
    for (const [name, service] of Object.entries({ memory, worker, gateway })) {
      because(name, () => expect(service?.image).toBe(memory?.image));
      because(name, () => expect(service?.pull_policy).toBe('never'));
      if (service !== memory) because(name, () => expect(service?.build).toBeUndefined());
      because(name, () => expect(service?.depends_on?.['memory'] ?? (service === memory ? {} : undefined)).toBeDefined());
      // Each may call a model or embeddings server on the host (.env.example suggests a local one).
      because(name, () => expect(service?.extra_hosts).toEqual(['host.docker.internal:host-gateway']));
      because(name, () => expect(service?.env_file).toEqual([{ path: '.env', required: false }]));
    }
    for (const [name, service] of Object.entries(compose.services)) {
      because(name, () => expect(service.restart).toBe('unless-stopped'));
      because(name, () => expect(service.healthcheck?.test[0]).toBe('CMD'));
      for (const dependency of Object.values(service.depends_on ?? {})) because(name, () => expect(dependency.condition).toBe('service_healthy'));
    }
    const defaults = loadConfig({});
    expect(interpolate(gateway!.ports![0]!, readEnvExample())).toBe(`8080:${defaults.gateway.port}`);
    // The data dir is a volume, by default a named one the image's non-root user owns.
    const dataVolume = interpolate(memory!.volumes![0]!, {}).split(':');
    expect(dataVolume[1]).toBe(imageEnvironment()['ENGRAM_DATA_DIR']);
    expect(Object.keys(compose.volumes ?? {})).toContain(dataVolume[0]);
    // Gateway and worker read the internal token memory writes there, and nothing else: read-only.
    // Memory and worker embed (EMBEDDINGS_MODEL_DIR): the same model folder, read-only, at the same place.
    const modelVolume = memory!.volumes![1]!;
    expect(modelVolume).toMatch(/:ro$/);
    expect(gateway?.volumes).toEqual([`${memory!.volumes![0]}:ro`]);
    expect(worker?.volumes).toEqual([`${memory!.volumes![0]}:ro`, modelVolume]);
    expect(worker?.environment?.['EMBEDDINGS_MODEL_DIR']).toBe(memory?.environment?.['EMBEDDINGS_MODEL_DIR']);
    const [modelSource, modelTarget] = interpolate(modelVolume, {}).split(':');
    expect(Object.keys(compose.volumes ?? {})).toContain(modelSource);
    expect(interpolate(String(memory?.environment?.['EMBEDDINGS_MODEL_DIR']), { EMBEDDINGS_MODEL_DIR: '/srv/models/all-MiniLM-L6-v2' })).toBe(
      modelTarget,
    );
    expect(interpolate(String(memory?.environment?.['EMBEDDINGS_MODEL_DIR']), {})).toBe('');
  });

  it('builds its image from every workspace and documents every default it shows', () => {
    const dockerfile = readFileSync(join(repoRoot, 'ops/Dockerfile'), 'utf8');
    const groups = readdirSync(join(repoRoot, 'libs')).map((group) => `libs/${group}`);
    const workspaces = [...groups, 'apps'].flatMap((root) =>
      readdirSync(join(repoRoot, root))
        .filter((name) => existsSync(join(repoRoot, root, name, 'package.json')))
        .map((name) => `${root}/${name}/package.json`),
    );
    for (const manifest of workspaces) because(`ops/Dockerfile must COPY ${manifest}`, () => expect(dockerfile).toContain(`COPY ${manifest} `));
    expect(dockerfile).toMatch(/^USER node$/m);

    // The commented "# VAR=value" lines of .env.example are the defaults config really applies.
    const applied = loadConfig(commentedDefaults());
    expect(applied).toEqual(loadConfig({}));
  });

  describe('a conversation through the services the compose file starts', () => {
    let upstream: ScriptedHttpServer;
    let topology: ComposeTopology;

    beforeAll(async () => {
      upstream = await ScriptedHttpServer.start((request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(scriptedMemoryModel(request)));
      });
      // What a person writes into .env: their upstream and its key.
      topology = await startComposeTopology({
        UPSTREAM_BASE_URL: `${upstream.url}/v1`,
        UPSTREAM_API_KEY: 'sk-upstream',
        LOG_LEVEL: 'info',
      });
    });

    afterAll(async () => {
      await topology?.stop();
      await upstream?.close();
    });

    it('wires the gateway to memory and Redis by the compose host names', async () => {
      const ready = await fetch(`${topology.gatewayUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ checks: { memory: 'up', redis: 'up' } });
    });

    it('stores a fact in one turn and recalls it in the next', async () => {
      const outcome = await storeThenRecall(topology.gatewayUrl);
      expect(outcome).toEqual({
        storeAnswer: 'Noted.',
        storeToolCalls: [],
        storeRequestId: STORE_REQUEST_ID,
        recallAnswer: 'With docker compose, on your NAS.',
      });

      // Upstream got the server's key, never the client's.
      expect(upstream.requests.every((request) => request.headers.authorization === 'Bearer sk-upstream')).toBe(true);
      // The memory lives in the compose data volume, readable as a flat file.
      const userFile = join(topology.volumes.get('memory:/data')!, 'pools', 'default', 'USER.md');
      expect(readFileSync(userFile, 'utf8')).toContain(DEPLOY_FACT);
    });

    it('logs the client request id in the gateway and in the memory service that stored for it', () => {
      const logs = (service: string): string => topology.processes.get(service)?.output() ?? '';
      expect(logs('gateway')).toContain(`"requestId":"${STORE_REQUEST_ID}"`);
      expect(logs('memory')).toContain(`"requestId":"${STORE_REQUEST_ID}"`);
    });
  });

  describe('with EMBEDDINGS_MODEL_DIR in .env (a model folder on the server)', () => {
    const model = tempDataDir('engram-model-');
    let topology: ComposeTopology;

    beforeAll(async () => {
      writeSentenceEncoder(model.path, { maxSeqLength: 64 });
      topology = await startComposeTopology({ UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1', EMBEDDINGS_MODEL_DIR: model.path, LOG_LEVEL: 'info' });
    });

    afterAll(async () => {
      await topology?.stop();
      model.remove();
    });

    it('mounts the folder into memory and the worker, which both load the model', () => {
      for (const service of ['memory', 'worker']) {
        because(service, () => expect(topology.environments.get(service)?.['EMBEDDINGS_MODEL_DIR']).toBe(model.path));
      }
      expect(topology.processes.get('memory')?.output()).toMatch(/"in":"process".*"msg":"hybrid search: embedding queries"/);
      expect(topology.processes.get('worker')?.output()).toMatch(/"embeddings":\{"model":"onnx-[0-9a-f]{16}"[^}]*"in":"process"\}/);
    });
  });
});
