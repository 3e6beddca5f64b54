// Lint rules of the project (typescript-eslint's recommended set); formatting is Prettier's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config({ ignores: ['node_modules/**', 'cdk.out/**', '.data/**'] }, js.configs.recommended, ...tseslint.configs.recommended, {
  rules: {
    // AWS event shapes and SDK items are loosely typed at the edges; zod checks what crosses them.
    '@typescript-eslint/no-explicit-any': 'off',
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
    // Control characters are what some validators look for on purpose (names, SQS's character set).
    'no-control-regex': 'off',
  },
});
