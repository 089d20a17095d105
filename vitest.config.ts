import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));
// Tests import libraries by their entry point, from source.
const alias = [{ find: /^@engram\/([a-z-]+)$/, replacement: `${root}libs/$1/src/index.ts` }];

export default defineConfig({
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: ['libs/*/src/**/*.spec.ts', 'apps/*/src/**/*.spec.ts'],
          exclude: ['**/*.medium.spec.ts', '**/node_modules/**', '**/dist/**'],
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'medium',
          sequence: { groupOrder: 1 },
          include: ['libs/*/src/**/*.medium.spec.ts', 'apps/*/src/**/*.medium.spec.ts', 'tests/medium/**/*.spec.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'e2e',
          // Tiers run one after the other (unit, medium, e2e), each with its own parallelism.
          sequence: { groupOrder: 2 },
          include: ['tests/e2e/**/*.e2e.spec.ts'],
          testTimeout: 60_000,
          hookTimeout: 90_000,
          // Each e2e file starts its own processes; two at a time fit two cores.
          maxWorkers: 2,
          fileParallelism: true,
        },
      },
    ],
  },
});
