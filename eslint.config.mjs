import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

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
