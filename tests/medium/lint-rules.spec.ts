import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { repoRoot } from '../support/compose.js';

const run = promisify(execFile);

interface LintMessage {
  readonly line: number;
  readonly ruleId: string | null;
  readonly message: string;
}

/** The project graph first (the boundary rule reads it), then eslint on the fixtures, which `npm run lint` skips. */
async function lintFixtures(files: readonly string[]): Promise<Map<string, LintMessage[]>> {
  await run(process.execPath, [join(repoRoot, 'node_modules/nx/dist/bin/nx.js'), 'show', 'projects'], { cwd: repoRoot });
  const eslint = join(repoRoot, 'node_modules/eslint/bin/eslint.js');
  const result = await run(process.execPath, [eslint, '--no-ignore', '--format', 'json', ...files], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; code?: number }) => {
    if (error.code !== 1 || !error.stdout) throw error;
    return { stdout: error.stdout };
  });
  const reports = JSON.parse(result.stdout) as { filePath: string; messages: LintMessage[] }[];
  return new Map(reports.map((report) => [report.filePath.slice(repoRoot.length), report.messages]));
}

const DOMAIN = 'libs/shared/domain/src/lint-fixtures/forbidden-imports.ts';
const GATEWAY = 'apps/gateway/src/lint-fixtures/forbidden-imports.ts';
const MEMORY = 'apps/memory/src/lint-fixtures/forbidden-imports.ts';
const STORAGE = 'libs/memory/store/src/lint-fixtures/opens-database.ts';
const TESTS = 'tests/lint-fixtures/imports-app-source.ts';

describe('lint rules', () => {
  let found: Map<string, LintMessage[]>;
  const at = (file: string, line: number) =>
    (found.get(file) ?? []).filter((message) => message.line === line).map((message) => `${message.ruleId}: ${message.message.split('\n')[0]}`);

  // Type-aware eslint over the fixtures and the project graph: ~25 s alone, past the 60 s default on a loaded machine.
  beforeAll(async () => {
    found = await lintFixtures([DOMAIN, GATEWAY, MEMORY, STORAGE, TESTS]);
  }, 240_000);

  it('keep frameworks and drivers out of the domain', () => {
    expect(at(DOMAIN, 4)).toEqual([
      expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: 'better-sqlite3-multiple-ciphers' .*plain TypeScript/),
    ]);
    expect(at(DOMAIN, 5)).toEqual([expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: '@nestjs\/common' /)]);
    expect(at(DOMAIN, 6)).toEqual([expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: 'bullmq' /)]);
  });

  it('keep SQLite in storage, Redis drivers in repositories, storage, test helpers and test support out of the gateway', () => {
    expect(at(GATEWAY, 3)).toEqual([expect.stringMatching(/'better-sqlite3-multiple-ciphers' .*through @engram\/memory-store/)]);
    expect(at(GATEWAY, 4)).toEqual([expect.stringMatching(/'ioredis' .*repositories/)]);
    expect(at(GATEWAY, 5)).toEqual([]);
    expect(at(GATEWAY, 6)).toEqual([expect.stringMatching(/^@nx\/enforce-module-boundaries: .*"scope:gateway" can only depend on/)]);
    expect(at(GATEWAY, 7)).toEqual([expect.stringMatching(/'@engram\/testing' .*for specs only/)]);
    // The boundary rule lets the gateway's medium specs import it; the code they test may not.
    expect(at(GATEWAY, 8)).toEqual([expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: .*memory-in-process\.js.* for specs only/)]);
  });

  it('keep SQLite out of the memory app too: it reaches the database through @engram/memory-store', () => {
    expect(at(MEMORY, 3)).toEqual([
      expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: 'better-sqlite3-multiple-ciphers' .*through @engram\/memory-store/),
    ]);
    expect(at(MEMORY, 4)).toEqual([]);
  });

  it('open databases in one file of storage, which applies the key and cipher: elsewhere only the driver types; keep its testing folder to specs', () => {
    expect(at(STORAGE, 3)).toEqual([
      expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: 'better-sqlite3-multiple-ciphers' .*database\.ts/),
    ]);
    expect(at(STORAGE, 4)).toEqual([]);
    expect(at(STORAGE, 5)).toEqual([
      expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: .*testing\/postgres-per-test\.js.* for specs only/),
    ]);
  });

  it("refuse a test that imports an app's source", () => {
    expect(at(TESTS, 3)).toEqual([expect.stringMatching(/^@nx\/enforce-module-boundaries: /)]);
  });
});
