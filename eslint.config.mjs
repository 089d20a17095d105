import js from '@eslint/js';
import prettier from 'eslint-config-prettier/flat';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const testingOnlyInSpecs = { name: '@engram/testing', message: 'Test helpers are for specs only.' };
// The boundary rule's allow list lets specs import tests/support and a lib's testing folder by path: the code they test may not.
const testSupportOnlyInSpecs = {
  regex: '(^|/)(tests/support|testing)/',
  message: 'Test support (tests/support, a testing folder) is for specs only.',
};
const SQLITE = 'better-sqlite3-multiple-ciphers';
const sqliteOnlyInStorage = [
  { name: SQLITE, message: 'SQLite is reached through @engram/memory-store.' },
  { name: 'better-sqlite3', message: `The SQLite driver is ${SQLITE} (SQLCipher), reached through @engram/memory-store.` },
];
// Inside storage, one file opens databases (and applies the data dir's key and cipher): the rest use the driver's types.
const sqliteOpenedInDatabaseTs = [
  {
    name: SQLITE,
    message: "Databases are opened in database.ts, which applies the key and cipher; import the driver's types only.",
    allowTypeImports: true,
  },
  sqliteOnlyInStorage[1],
];
const redisDrivers = ['bullmq', 'ioredis'].map((name) => ({
  name,
  message: `${name} is used by the apps' repositories (and BullMQ processors); elsewhere import its types only.`,
  allowTypeImports: true,
}));
const frameworks = ['@nestjs/*', 'fastify', 'bullmq', 'ioredis', 'better-sqlite3*', 'undici'].map((group) => ({
  group: [group],
  message: 'Domain, engine and maintenance are plain TypeScript: frameworks and drivers stay in the apps and storage.',
}));

function restrictedImports() {
  const rule = (paths, patterns = []) => ({ '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }] });
  // For the code specs test (not specs): test support is refused on top.
  const codeRule = (paths, patterns = []) => rule(paths, [...patterns, testSupportOnlyInSpecs]);
  const specs = ['**/*.spec.ts', '**/testing/**', '**/*.fixture.ts', 'libs/shared/testing/**', 'tests/**', 'bench/**'];
  // Where the Redis drivers are wired: the repositories, the BullMQ processors, the shared connection, a main.
  const redisHomes = [
    'apps/*/src/repositories/**',
    'apps/worker/src/processors/**',
    'apps/*/src/main.ts',
    'libs/shared/observability/src/redis-connection.ts',
  ];
  return [
    {
      files: ['libs/*/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
      ignores: specs,
      rules: codeRule([testingOnlyInSpecs, ...sqliteOnlyInStorage, ...redisDrivers]),
    },
    { files: ['libs/memory/store/src/**/*.ts'], ignores: specs, rules: codeRule([testingOnlyInSpecs, ...sqliteOpenedInDatabaseTs, ...redisDrivers]) },
    { files: ['libs/memory/store/src/database/database.ts'], rules: codeRule([testingOnlyInSpecs, sqliteOnlyInStorage[1], ...redisDrivers]) },
    { files: redisHomes, rules: codeRule([testingOnlyInSpecs, ...sqliteOnlyInStorage]) },
    { files: ['libs/{shared/domain,gateway/engine,worker/handlers}/src/**/*.ts'], ignores: specs, rules: codeRule([testingOnlyInSpecs], frameworks) },
    { files: ['libs/{shared/domain,gateway/engine,worker/handlers}/src/**/*.spec.ts'], rules: rule([], frameworks) },
  ];
}

export default tseslint.config(
  // lint-fixtures hold deliberate violations; tests/medium/lint-rules.spec.ts lints them with --no-ignore.
  { ignores: ['**/dist/**', '**/node_modules/**', '.nx/**', 'bench/results/**', 'data/**', '**/lint-fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          banTransitiveDependencies: false,
          // Benchmarks start the stack with the tests' harness; benches and tests build inputs with the libs' testing helpers.
          // An app's medium specs run their services against the real memory service in process (memoryInProcess),
          // and against a private Redis (startRedis).
          allow: [
            '../tests/support/*',
            '^(\\.\\./)+libs/[a-z-]+/[a-z-]+/src/testing/[a-z0-9-]+\\.js$',
            '^(\\.\\./)+tests/support/memory-in-process\\.js$',
            '^(\\.\\./)+tests/support/redis\\.js$',
          ],
          depConstraints: [
            // Apps never import apps; tests and benches reach the apps as processes, never through their source.
            { sourceTag: 'type:app', notDependOnLibsWithTags: ['type:app'] },
            { sourceTag: 'type:test', notDependOnLibsWithTags: ['type:app'] },
            // type:testing (`@engram/testing`) is for specs; a rule below keeps it out of the code they test.
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:testing'] },
            // The domain is pure: it knows no wire format. Contracts describe the wire in domain terms.
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:util'] },
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts', 'type:domain', 'type:util', 'type:testing'] },
            // Features (the turn engine, maintenance) apply the domain through the contracts.
            { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:testing'] },
            { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:testing'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:domain', 'type:util'] },
            // Only memory reaches storage; gateway and worker reach memory through contracts.
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:memory', onlyDependOnLibsWithTags: ['scope:memory', 'scope:shared'] },
            { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:gateway', 'scope:shared'] },
            { sourceTag: 'scope:worker', onlyDependOnLibsWithTags: ['scope:worker', 'scope:shared'] },
            // The console runs in a browser: pure domain code and contract types only.
            { sourceTag: 'scope:console', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts'] },
          ],
        },
      ],
    },
  },
  // Drivers and frameworks stay where they belong. Each block names every restriction for its files
  // (a later block's no-restricted-imports replaces an earlier one's, it does not add to it).
  ...restrictedImports(),
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['process', 'console', 'URL', 'fetch', 'AbortSignal', 'setTimeout', 'clearTimeout', 'Buffer'].map((name) => [name, 'readonly']),
      ),
    },
  },
  // Layout is Prettier's (.prettierrc.json): no lint rule may disagree with it.
  prettier,
);
