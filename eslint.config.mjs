// typescript-eslint's strict rules (no `any`, no unused code) over the source, tests, benchmarks and examples.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'src/redis/lua-sources.generated.ts',
      'src/core/constants.generated.ts',
      'bench/results/**',
      'coverage/**',
    ],
  },
  ...tseslint.configs.strict,
  {
    rules: {
      // noUncheckedIndexedAccess is on: `!` marks an index the code has just bounded (hot loops stay branch-free).
      '@typescript-eslint/no-non-null-assertion': 'off',
      // A leading underscore names what is left out on purpose (`{ busy: _busy, ...view }`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // The benchmarks, examples and scripts are CommonJS programs run by node as they are.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
