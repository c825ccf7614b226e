import { createProjectGraphAsync } from '@nx/devkit';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// @nx/enforce-module-boundaries reads Nx's cached project graph and, when there is none (a fresh
// clone, a plain `npx eslint`), prints a warning and checks nothing. Computing the graph here,
// before any file is linted, makes every ESLint run enforce the boundaries; a graph that cannot
// be computed fails the run instead of silently disabling the rule.
process.env.NX_DAEMON ??= 'false';
await createProjectGraphAsync({ exitOnError: false });

export default [
  { ignores: ['**/dist/**', '**/node_modules/**', 'libs/contracts/src/generated/**', 'coverage/**', '**/*.mjs', '**/*.js'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    languageOptions: { parserOptions: { project: ['./tsconfig.lint.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Layering: libs depend only on libs; a service never imports another service; only the
      // composition root (standalone) wires services together; test helpers stay in tests.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib'] },
            { sourceTag: 'scope:service', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
            { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib', 'scope:service', 'scope:testing'] },
            { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['scope:lib'] },
          ],
        },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
];
