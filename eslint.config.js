// Lint rules of the project (typescript-eslint's recommended set); formatting is Prettier's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', '.data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // AWS event shapes and SDK items are loosely typed at the edges; zod checks what crosses them.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Control characters are what some validators look for on purpose (names, SQS's character set).
      'no-control-regex': 'off',
    },
  },
  {
    // The layers import downward only: app/ (registries: routes, topology, bus rules, event catalog, OpenAPI) and functions/
    // (handlers) above shared/, whose modules import only modules below them (docs/architecture.md; test/unit/module-cycles.test.ts).
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(#|(\\.\\./)+)(functions|app)/', message: 'shared/ is below functions/ and app/: it cannot import them.' },
            // Only a module's own service touches its items (docs/data-model.md): another module goes through its service or api.ts.
            {
              regex: '^((\\.\\./)+[^./][^/]*|#shared/[^/]+)/repository(\\.ts)?$',
              message: "Another module's items are its own: import its api.ts (or its service), not its repository.",
            },
          ],
        },
      ],
      // The same for import(), which no-restricted-imports does not look at.
      'no-restricted-syntax': [
        'error',
        { selector: 'ImportExpression[source.value=/^(#|(\\.\\.\\x2F)+)(functions|app)\\x2F/]', message: 'shared/ is below functions/ and app/: it cannot import them.' },
      ],
    },
  },
  {
    files: ['functions/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(#|(\\.\\./)+)app/', message: 'app/ wires the functions: a function cannot import it.' },
            { regex: '^(#shared|(\\.\\./)+shared)/[^/]+/repository(\\.ts)?$', message: "A handler goes through the module's service, never its repository." },
          ],
        },
      ],
      'no-restricted-syntax': ['error', { selector: 'ImportExpression[source.value=/^(#|(\\.\\.\\x2F)+)app\\x2F/]', message: 'app/ wires the functions: a function cannot import it.' }],
    },
  },
  {
    // app/ is data the CDK app, the local stack and the scripts read: routes, tables, registries. It names the functions by
    // their entry files and reads modules' contracts, events and schemas, never their items.
    files: ['app/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(#|(\\.\\./)+)functions/', message: 'app/ names a function by its entry file (registry.ts, topology.ts); it does not import it.' },
            { regex: '^(#shared|(\\.\\./)+shared)/[^/]+/repository(\\.ts)?$', message: "app/ reads modules' contracts and schemas, never their repositories." },
          ],
        },
      ],
    },
  },
  {
    // End-to-end tests go through the API; what the API cannot do (a closed ticket, back-dated records, a large account
    // seeded fast, reading what a write stored) is a named helper in test/support/store.ts that says why.
    files: ['test/e2e/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(#shared|(\\.\\./)+shared)/[^/]+/repository(\\.ts)?$',
              message: 'An e2e test goes through the API; for what it cannot do, use (or add) a helper in test/support/store.ts.',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/^(#shared|(\\.\\.\\x2F)+shared)\\x2F[^\\x2F]+\\x2Frepository(\\.ts)?$/]',
          message: 'An e2e test goes through the API; for what it cannot do, use (or add) a helper in test/support/store.ts.',
        },
      ],
    },
  },
  {
    // Temporary exceptions (issue 32): files their owners are changing now; they move their repository uses to
    // test/support/store.ts and drop their line here.
    files: [
      'test/e2e/bulk-jobs.test.ts',
      'test/e2e/users-auth.test.ts',
      'test/e2e/authorizer-cache.test.ts',
      'test/e2e/webhooks*.test.ts',
      'test/e2e/crash-restart.test.ts',
      'test/e2e/faults*.test.ts',
      'test/e2e/request-cost.test.ts',
    ],
    rules: { 'no-restricted-imports': 'off', 'no-restricted-syntax': 'off' },
  },
);
