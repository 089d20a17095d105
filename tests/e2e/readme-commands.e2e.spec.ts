import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, tempDataDir, writeSentenceEncoder } from '@engram/testing';
import { repoRoot, startComposeTopology, type ComposeTopology } from '../support/compose.js';
import { scriptedMemoryModel } from '../support/compose-conversation.js';
import { fencedBlocks, readmeBlocks, readmeCommands } from '../support/readme.js';
import { ScriptedHttpServer } from '../support/scripted-http.js';

const run = promisify(execFile);
const README_URL = 'http://localhost:8080';
/** The key Set up has the person make, in ENGRAM_API_KEYS and in their shell. */
const KEY = 'readme-key-0123456789abcdef';

/** Commands a Docker engine runs: ops/compose-smoke.sh runs every one of them (and the ops/ ones), in README order. */
const isDockerCompose = (command: string): boolean => command.startsWith('docker compose ');
/** Commands run elsewhere, with the file that runs them and the line that does. */
const RUN_ELSEWHERE: Readonly<Record<string, { file: string; marker: string }>> = {
  'npm ci': { file: '.ci/run', marker: 'npm ci --no-audit --no-fund' },
  'npm test': { file: '.ci/run', marker: 'npm test' },
  'npm start': { file: 'tests/e2e/start-supervisor.e2e.spec.ts', marker: "Supervisor.start('npm', ['start']" },
  // The advice `npm start` prints without Redis, asserted word for word by the supervisor test.
  'docker run -d --name engram-redis -p 6379:6379 redis:7-alpine': {
    file: 'tests/e2e/start-supervisor.e2e.spec.ts',
    marker: "'docker run -d --name engram-redis -p 6379:6379 redis:7-alpine'",
  },
};
/** Other people's programs: the README shows how to point them at Engram; the API they speak is tested. */
const THIRD_PARTY = new Set(['claude', 'cloudflared tunnel --url http://localhost:8080']);
/**
 * Client settings the gateway e2e suites apply to the official SDKs (tests/support/client-config-doc.ts
 * reads them from this file); the README must show the same ones.
 */
const CLIENT_DOC = 'ops/docs/clients-anthropic-responses.md';
const isClientSetting = (command: string): boolean => command.startsWith('export ANTHROPIC_');
/** `claude mcp add` lines: tests/e2e/mcp.e2e.spec.ts runs each (tests/support/mcp-client-config.ts) against a real gateway. */
const MCP_RECIPES = { file: 'tests/e2e/mcp.e2e.spec.ts', marker: 'claudeCodeMcpCommands()' };
const isMcpRecipe = (command: string): boolean => command.startsWith('claude mcp add ');
/**
 * Fetching a model folder once, from Hugging Face: nothing here reaches it (no network but the package
 * registries), so the lines are checked against what Engram reads instead (the test below).
 */
const isModelDownload = (command: string): boolean =>
  command.startsWith('mkdir -p /srv/engram-models/') || command.startsWith('hub=https://huggingface.co/') || /^curl .*\$hub\//.test(command);
/** Commands this file runs against the compose services, as a newcomer would type them. */
const isRunHere = (command: string): boolean =>
  !isModelDownload(command) &&
  (command === 'cp .env.example .env' || command.startsWith('curl ') || command.startsWith('npx engram ') || command.startsWith('ops/'));

describe('README.md', () => {
  it('has no command that nothing runs', () => {
    const smoke = readFileSync(join(repoRoot, 'tests/support/compose-smoke.ts'), 'utf8');
    for (const command of readmeCommands()) {
      if (isRunHere(command) || THIRD_PARTY.has(command) || isClientSetting(command) || isModelDownload(command)) continue;
      if (isMcpRecipe(command)) {
        because(command, () => expect(readFileSync(join(repoRoot, MCP_RECIPES.file), 'utf8')).toContain(MCP_RECIPES.marker));
        continue;
      }
      if (isDockerCompose(command)) {
        because('compose-smoke runs the README docker compose lines', () => expect(smoke).toContain('readmeCommands()'));
        continue;
      }
      const elsewhere = RUN_ELSEWHERE[command];
      because(`README command \`${command}\` is run by no test: run it here or list where`, () => expect(elsewhere).toBeDefined());
      because(command, () => expect(readFileSync(join(repoRoot, elsewhere!.file), 'utf8')).toContain(elsewhere!.marker));
    }
  });

  it('shows the Claude Code and Codex settings the gateway end-to-end tests use', () => {
    const doc = readFileSync(join(repoRoot, CLIENT_DOC), 'utf8');
    expect(readFileSync(join(repoRoot, 'tests/support/client-config-doc.ts'), 'utf8')).toContain(CLIENT_DOC);
    const fenced = (lang: string): string[] =>
      fencedBlocks(doc)
        .filter((block) => block.lang === lang)
        .map((block) => block.text);
    const readme = readmeBlocks();
    const claude = fenced('sh')[0]!;
    const codex = fenced('toml')[0]!;
    expect(readme.some((block) => block.lang === 'sh' && block.text === claude)).toBe(true);
    expect(readme.some((block) => block.lang === 'toml' && block.text === codex)).toBe(true);
    for (const command of readmeCommands().filter(isClientSetting)) expect(claude).toContain(command);
  });

  it("fetches the files of a model folder that Engram reads, where it reads them, from the repository's files", () => {
    const downloads = readmeCommands().filter(isModelDownload);
    const hub = /^hub=(\S+)$/.exec(downloads.find((command) => command.startsWith('hub='))!)![1]!;
    expect(hub).toMatch(/^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+\/resolve\/main$/);
    // `curl -fL -o NAME $hub/PATH` or `curl -fLO $hub/PATH` (NAME = PATH's last part).
    const fetched = downloads
      .filter((command) => command.startsWith('curl '))
      .map((command) => {
        const path = /\$hub\/(\S+)$/.exec(command)![1]!;
        return { from: path, to: /-o (\S+)/.exec(command)?.[1] ?? path.split('/').at(-1)! };
      });
    // What a generated folder holds when it has every file Engram reads: the same names.
    const folder = tempDataDir('engram-readme-model-');
    try {
      writeSentenceEncoder(folder.path, { maxSeqLength: 256, pooling: 'mean' });
      const files = readdirSync(folder.path, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => relative(folder.path, join(entry.parentPath, entry.name)))
        .sort();
      expect(fetched.map((file) => file.to).sort()).toEqual(files);
    } finally {
      folder.remove();
    }
    expect(fetched).toContainEqual({ from: 'onnx/model.onnx', to: 'model.onnx' });
    expect(fetched).toContainEqual({ from: 'tokenizer.json', to: 'tokenizer.json' });
  });

  it('documents every variable the configuration reads', () => {
    const schema = readFileSync(join(repoRoot, 'libs/shared/config/src/config.ts'), 'utf8');
    const body = schema.slice(schema.indexOf('const EnvSchema'), schema.indexOf('});', schema.indexOf('const EnvSchema')));
    const variables = [...body.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]!);
    expect(variables.length).toBeGreaterThan(10);
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## How memory works'));
    expect(variables.filter((variable) => !table.includes(`\`${variable}\``))).toEqual([]);
  });

  describe("commands, run against the services docker-compose.yml starts, on the README's own set-up (keys set)", () => {
    let upstream: ScriptedHttpServer;
    let topology: ComposeTopology;
    let home: string;
    let env: Record<string, string>;

    const sh = async (command: string) => {
      try {
        const { stdout, stderr } = await run('sh', ['-c', command.replaceAll(README_URL, topology.gatewayUrl)], { cwd: home, env, timeout: 60_000 });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const failed = error as { code?: number; stdout?: string; stderr?: string };
        return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
      }
    };
    const commands = (prefix: string): string[] => readmeCommands().filter((command) => command.startsWith(prefix));

    beforeAll(async () => {
      upstream = await ScriptedHttpServer.start((request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(scriptedMemoryModel(request)));
      });
      // Set up: "give each person or tool a key ... and put your provider's key on the server".
      topology = await startComposeTopology({
        UPSTREAM_BASE_URL: `${upstream.url}/v1`,
        ENGRAM_API_KEYS: `${KEY}=*`,
        UPSTREAM_API_KEY: 'sk-upstream',
      });
      // A newcomer's shell: a folder of their own, the repository's tools on hand, Engram's data dir.
      home = mkdtempSync(join(tmpdir(), 'engram-readme-'));
      symlinkSync(join(repoRoot, 'node_modules'), join(home, 'node_modules'));
      symlinkSync(join(repoRoot, 'ops'), join(home, 'ops'));
      copyFileSync(join(repoRoot, '.env.example'), join(home, '.env.example'));
      env = {
        PATH: process.env['PATH'] ?? '',
        HOME: home,
        // The SDK example's key ("your key from ENGRAM_API_KEYS"), and the one the curl lines send.
        OPENAI_API_KEY: KEY,
        ENGRAM_API_KEY: KEY,
        ENGRAM_DATA_DIR: topology.volumes.get('memory:/data')!,
        // npx must use the repository's `engram`, never fetch a package of that name.
        npm_config_yes: 'false',
      };
    });

    afterAll(async () => {
      await topology?.stop();
      await upstream?.close();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    it('cp .env.example .env gives a .env that needs no edit to start', async () => {
      expect((await sh('cp .env.example .env')).code).toBe(0);
      expect(readFileSync(join(home, '.env'), 'utf8')).toBe(readFileSync(join(repoRoot, '.env.example'), 'utf8'));
    });

    it('the OpenAI SDK example talks to the model through Engram', async () => {
      const snippet = readmeBlocks().find((block) => block.lang === 'js' && block.text.includes("from 'openai'"));
      expect(snippet).toBeDefined();
      writeFileSync(join(home, 'example.mjs'), snippet!.text.replaceAll(README_URL, topology.gatewayUrl));
      const result = await sh('node example.mjs');
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).toBe('Noted.');
    });

    it('the curl commands answer with JSON, and a stored memory is listed', async () => {
      for (const command of commands('curl ').filter((line) => !isModelDownload(line))) {
        const result = await sh(command);
        because(command, () => expect(result.code).toBe(0));
        const body: unknown = JSON.parse(result.stdout);
        because(command, () => expect(body).not.toHaveProperty('error'));
      }
      const listed = await sh(commands('curl -s -H "Authorization: Bearer $ENGRAM_API_KEY" http://localhost:8080/engram/pools/default/memories')[0]!);
      expect(listed.stdout).toContain('I prefer short answers');
      // Keys are really required here: without the header the same request is refused.
      expect((await sh(`curl -s -o /dev/null -w '%{http_code}' ${README_URL}/engram/pools/default/memories`)).stdout).toBe('401');
    });

    it('ops/backup.sh copies the running data dir; ops/restore.sh refuses until memory stops, then restores', async () => {
      const [backup] = commands('ops/backup.sh');
      const [restore] = commands('ops/restore.sh');
      const made = await sh(backup!);
      because(made.stderr, () => expect(made.code).toBe(0));
      expect(made.stdout).toMatch(/^backed up /m);
      expect(readdirSync(join(home, 'backups'))).toHaveLength(1);
      // Run in the clone, the same line writes ./backups there: memory content that `git add .` must not take.
      const [backupName] = readdirSync(join(home, 'backups'));
      await expect(run('git', ['check-ignore', '--quiet', `backups/${backupName!}/engram.db`], { cwd: repoRoot })).resolves.toBeDefined();

      const refused = await sh(restore!);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('in use by another engram process');

      await topology.processes.get('memory')!.stop();
      const restored = await sh(restore!);
      because(restored.stderr, () => expect(restored.code).toBe(0));
      expect(existsSync(join(env['ENGRAM_DATA_DIR']!, 'engram.db'))).toBe(true);
    });
  });
});
