// Three tiers, run one after the other by `npm test` (unit, medium, e2e), each with its own parallelism:
// `npm run test:unit|test:medium|test:e2e` pick one with --selectProjects.
// Specs are ESM TypeScript, compiled by swc; jest runs them as ES modules (node --experimental-vm-modules).

/** @type {import('@swc/core').Config} */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  moduleNameMapper: {
    // Tests import libraries by their entry point, from source.
    // @engram/<process>-<name> is libs/<process>/<name>; @engram/<name> is libs/shared/<name>.
    '^@engram/(memory|gateway|worker)-([a-z-]+)$': '<rootDir>/libs/$1/$2/src/index.ts',
    '^@engram/([a-z-]+)$': '<rootDir>/libs/shared/$1/src/index.ts',
    // Sources import siblings as `./x.js` (NodeNext); the file on disk is `./x.ts`.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};

/** @type {import('jest').Config} */
export default {
  // How long a jest worker may take to exit once told to (jest's default is 500 ms, then "A worker process
  // has failed to exit gracefully"). Measured on this 2-core machine under the e2e tier's load (load
  // average 7 to 10): a worker's event loop is empty 1 to 9 ms after it is told, nothing keeps it alive
  // 300 ms later, but the process itself is gone only 90 ms to over 500 ms later (a heap of a few hundred
  // test files' modules and native addons to tear down, on a starved CPU). A leaked handle still shows:
  // it keeps a worker alive past any grace period.
  workerGracefulExitTimeout: 5_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/libs/*/*/src/**/*.spec.ts', '<rootDir>/apps/*/src/**/*.spec.ts'],
      testPathIgnorePatterns: [...common.testPathIgnorePatterns, '\\.medium\\.spec\\.ts$'],
    },
    {
      ...common,
      displayName: 'medium',
      testMatch: ['<rootDir>/libs/*/*/src/**/*.medium.spec.ts', '<rootDir>/apps/*/src/**/*.medium.spec.ts', '<rootDir>/tests/medium/**/*.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/tests/support/jest/timeout-60s.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/tests/e2e/**/*.e2e.spec.ts'],
      // Each e2e file starts its own processes; startup hooks may take longer than a test.
      setupFilesAfterEnv: ['<rootDir>/tests/support/jest/timeout-240s.ts'],
    },
  ],
};
