import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration and end-to-end tests run against DynamoDB Local started here, once per run, and an SQS/S3 emulator per file.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-env.ts'],
    include: ['test/**/*.test.ts'],
    // Two files at once (vitest's default on 2 cores is one): most of a file's time is waiting on emulators and the
    // functions' workers. Files share DynamoDB Local (isolated by account); each has its own queues (file-sqs.ts).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { LOG_LEVEL: 'silent' },
  },
});
