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
    // Two files at once even on a 2-core machine (vitest's default there is one): most of a file's time is spent
    // waiting on emulators, function workers and child processes. The suite went 552 s -> 386 s in CI conditions.
    maxWorkers: 2,
  },
});
