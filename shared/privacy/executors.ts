import type { JobExecutor } from '../jobs/service.ts';

/**
 * The job types of privacy (decisions §23), for the consumer's table of
 * executors (functions/bulk-jobs/executors.ts): one item each (the contact),
 * one step at a time. Their code loads from its own chunk at the first step
 * of such a job: a bulk update never carries it.
 */
export const privacyExecutors = {
  erasure: { chunkSize: 1, concurrency: 1, run: async (job, contactId) => (await import('./erasure.ts')).eraseStep(job, contactId) },
  data_export: { chunkSize: 1, concurrency: 1, run: async (job, contactId) => (await import('./data-export.ts')).exportStep(job, contactId) },
} satisfies Record<'erasure' | 'data_export', JobExecutor>;
