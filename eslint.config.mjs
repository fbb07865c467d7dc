// @ts-check
/**
 * `make lint` (with dependency-cruiser, .dependency-cruiser.cjs): typescript-eslint with type
 * information, a chosen set of rules rather than the whole recommended set, each one a mistake the
 * type checker lets through. docs/architecture.md "Lint" says why each is here.
 */
import tseslint from 'typescript-eslint';

/** Promises, thrown values and imports: for every TypeScript file of the repository. */
const everywhere = {
  '@typescript-eslint/no-floating-promises': 'error',
  '@typescript-eslint/no-misused-promises': 'error',
  '@typescript-eslint/await-thenable': 'error',
  '@typescript-eslint/only-throw-error': 'error',
  '@typescript-eslint/no-for-in-array': 'error',
  '@typescript-eslint/no-implied-eval': 'error',
  '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
};

export default tseslint.config(
  { ignores: ['**/node_modules/**', 'dist/**', 'charts/**', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  {
    files: ['apps/**/*.ts', 'operator/**/*.ts', 'test/**/*.ts', 'migrations/**/*.ts', 'loadtest/run.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: everywhere,
  },
  {
    // The product's code says with its types what it checked: no `!`. Tests may write `found!.id`
    // after a lookup, because a wrong `!` there throws and fails the test that made it.
    files: ['apps/**/*.ts', 'operator/**/*.ts', 'migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'error' },
  },
);
