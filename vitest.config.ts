import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration and end-to-end tests run against DynamoDB Local started here, once per run.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-env.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { LOG_LEVEL: 'silent' },
  },
});
