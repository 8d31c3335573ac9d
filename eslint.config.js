// ESLint flat config for the fleet monorepo.
//
// TypeScript sources are linted with type information (typescript-eslint's
// `recommendedTypeChecked`). `projectService: true` lets typescript-eslint find, for each file,
// the nearest tsconfig.json (packages/*, plugins/*, test/), so no list of projects is kept here.
// Plain JavaScript (this file, bench/, packages/cli/bin/) belongs to no tsconfig, so it is linted
// without type information.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

// The Node.js globals our plain JavaScript files use (kept here rather than adding a dependency).
const nodeGlobals = Object.fromEntries(
  [
    'AbortController',
    'AbortSignal',
    'Buffer',
    'URL',
    'URLSearchParams',
    'clearInterval',
    'clearTimeout',
    'console',
    'globalThis',
    'process',
    'queueMicrotask',
    'setImmediate',
    'setInterval',
    'setTimeout',
    'structuredClone',
    'TextDecoder',
    'TextEncoder',
    'WeakRef',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig([
  globalIgnores([
    '**/node_modules/',
    '**/dist/',
    '**/coverage/',
    '**/*.manifest.json',
    // benchmark results (`npm run bench` output) and local lab state
    '.bench/',
    'bench/results/',
    '**/.fleet-lab/',
  ]),

  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,

  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },

  // Plain JavaScript: no tsconfig covers it, so no type-aware rules; it runs on Node.js. The
  // declaration file beside a script (scripts/*.d.mts, for the tests that import it) is no
  // project's either.
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs', 'scripts/*.d.mts'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'module',
      globals: nodeGlobals,
    },
  },

  // Tests use chai's property assertions: `expect(x).to.be.true` is an expression statement.
  {
    files: ['**/test/**/*.ts', '**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
]);
