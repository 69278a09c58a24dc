import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig([
  // Built output, and the programs tests/generatedClients.test.ts generates and compiles.
  globalIgnores(['dist/', 'coverage/', 'tests/generatedClients/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  // Tests walk JSON documents of any shape.
  { files: ['tests/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    files: ['web/src/**'],
    extends: [reactHooks.configs.flat.recommended],
    languageOptions: { globals: globals.browser },
  },
  // Formatting is Prettier's alone,
  prettier,
  // but for what it leaves long, comments and strings: every line, strings included, stays
  // within its width.
  {
    rules: {
      'max-len': ['error', { code: 100, ignoreRegExpLiterals: true }],
    },
  },
]);
