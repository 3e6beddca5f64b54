import { bulkExecutors } from '#shared/bulk/service.ts';
import type { JobExecutors } from '#shared/jobs/service.ts';
import { mergeExecutor } from '#shared/merge/executor.ts';
import { privacyExecutors } from '#shared/privacy/executors.ts';

/**
 * The job types this consumer runs: each type's executor (what it does with
 * each item), supplied to the runner of shared/jobs, which knows none of
 * them. A new job type is its name in JOB_TYPES (shared/jobs/model.ts) and
 * its executor here (docs/architecture.md).
 */
export const JOB_EXECUTORS: JobExecutors = {
  ...bulkExecutors,
  merge: mergeExecutor(),
  ...privacyExecutors,
};
