import { defineConfig } from 'vitest/config';

const shared = { maxWorkers: 2, testTimeout: 30_000, hookTimeout: 60_000, env: { LOG_LEVEL: 'silent' } } as const;

export default defineConfig({
  test: {
    // Two files at once (vitest's default on 2 cores is one): most of an integration file's time is waiting on
    // emulators and the functions' workers.
    maxWorkers: 2,
    projects: [
      {
        // The rules as pure functions: no emulator, no deployment; the whole project runs in seconds (`npm run test:unit`).
        test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'], setupFiles: ['test/support/unit-env.ts'] },
      },
      {
        // Integration and end-to-end tests run against DynamoDB Local started here, once per run, and an SQS/S3 emulator
        // per file. Files share DynamoDB Local (isolated by account); each has its own queues (file-sqs.ts).
        test: {
          ...shared,
          name: 'integration',
          include: ['test/e2e/**/*.test.ts', 'test/infra/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/setup-env.ts'],
        },
      },
    ],
  },
});
