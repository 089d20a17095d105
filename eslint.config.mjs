import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.nx/**', 'bench/results/**', 'data/**'] },
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
          depConstraints: [
            // Apps never import apps.
            { sourceTag: 'type:app', notDependOnLibsWithTags: ['type:app'] },
            // type:testing (`@engram/testing`) is for specs; the rule below keeps it out of the code they test.
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:testing'] },
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:testing'] },
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts', 'type:domain', 'type:util', 'type:testing'] },
            { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:testing'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util'] },
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
  {
    files: ['libs/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**', 'libs/testing/**', '**/*.fixture.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: '@engram/testing', message: 'Test helpers are for specs only.' }] }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['process', 'console', 'URL', 'fetch', 'AbortSignal', 'setTimeout', 'clearTimeout', 'Buffer'].map((name) => [
          name,
          'readonly',
        ]),
      ),
    },
  },
);
