import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';
import { RunRecorder } from './test/support/run-record.ts';

/** Files at once, in every project (vitest runs projects with different counts one after the other). */
const WORKERS = 2;

const shared = { maxWorkers: WORKERS, testTimeout: 30_000, hookTimeout: 60_000, env: { LOG_LEVEL: 'silent' } } as const;

/**
 * The files that take longest, longest first (measured on a full run): they start before the many short files, so
 * that the two workers end together. On a clean clone vitest has no durations from an earlier run and would order
 * by file size, which put a 2-minute file halfway through the run; a file not listed keeps vitest's order.
 */
const LONGEST_FIRST = [
  'test/e2e/crash-restart.test.ts',
  'test/e2e/faults.test.ts',
  'test/e2e/local-stack.test.ts',
  'test/e2e/search.test.ts',
  'test/e2e/bad-input-all-routes.test.ts',
  'test/e2e/email-channel.test.ts',
  'test/e2e/privacy-erasure.test.ts',
  'test/infra/bundles.test.ts',
  'test/e2e/bulk-jobs.test.ts',
  'test/e2e/history.test.ts',
];

/** Unit files that set the environment a module reads once at load, before loading it (a project of their own). */
const UNIT_ISOLATED = ['test/unit/faults.test.ts', 'test/unit/outbox-deletes-behind.test.ts', 'test/unit/request-deadline.test.ts', 'test/unit/session-secret-local.test.ts'];

/** The infra tests that read the run's deployment (its bundles, from the global setup). */
const INFRA_WITH_DEPLOYMENT = ['test/infra/bundles.test.ts'];

/**
 * The projects in the order their files start: the unit and infra files need no deployment, so they run while the
 * global setup prepares it (test/support/global-setup.ts; about 20 s on a fresh clone, when both workers were idle),
 * then the integration files, the longest first.
 */
const PROJECT_ORDER = ['unit', 'unit-isolated', 'infra', 'integration'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((f) => spec.moduleId.endsWith(f));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    const project = (spec: TestSpecification) => PROJECT_ORDER.indexOf(spec.project.name);
    // A stable sort: by project, then the listed files first, in their order; the rest as vitest ordered them.
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => project(a.spec) - project(b.spec) || rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    // Two files at once (vitest's default on 2 cores is one): most of an integration file's time is waiting on
    // emulators and the functions' workers. Three kept the cores busier (95% of a run against 85%) but did more work
    // (a third set of warm functions, emulator and CDK load): 4-13 s shorter in two alternated pairs of runs, within
    // their spread (272-313 s), and one more test worker's worth of timing pressure (docs/performance.md, "Stop 57").
    maxWorkers: WORKERS,
    // A whole run records its wall time for the bench's goals table (test/support/run-record.ts).
    reporters: ['default', new RunRecorder()],
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        // The rules as pure functions: no emulator, no deployment; the whole project runs in seconds (`npm run test:unit`).
        // Not isolated: a worker loads the modules the files share once (the project alone: 15 s of CPU isolated,
        // 7-9 s this way); unit-env.ts sets the environment again before each file and has the settings read afresh.
        test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: UNIT_ISOLATED, setupFiles: ['test/support/unit-env.ts'], isolate: false },
      },
      {
        // The unit files that need modules loaded afresh: each points a client or the fault injection at its own
        // fake before loading the module that reads it once.
        test: { ...shared, name: 'unit-isolated', include: UNIT_ISOLATED, setupFiles: ['test/support/unit-env.ts'] },
      },
      {
        // Integration and end-to-end tests run against DynamoDB Local started here, once per run, and an SQS/S3 emulator
        // per worker. Files share DynamoDB Local (isolated by account). Not isolated: a worker runs its files one after
        // another in one process, on its own queues, emptied between files (setup-env.ts, file-sqs.ts), and keeps the
        // functions warm from one file to the next (lambda.ts); a file's changes to the environment are put back after it.
        test: {
          ...shared,
          name: 'integration',
          include: ['test/e2e/**/*.test.ts', ...INFRA_WITH_DEPLOYMENT],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/setup-env.ts'],
          isolate: false,
        },
      },
      {
        // The CDK app synthesized in memory (no emulator, no deployment). Not isolated: the CDK's modules and its
        // CloudFormation validation (about 10 s to load) are loaded once per worker instead of once per file; each file
        // builds its own App, and nothing of one file's App reaches another's.
        test: { ...shared, name: 'infra', include: ['test/infra/**/*.test.ts'], exclude: INFRA_WITH_DEPLOYMENT, isolate: false },
      },
    ],
  },
});
