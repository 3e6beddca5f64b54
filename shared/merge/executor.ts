import type { JobExecutor } from '../jobs/service.ts';
import type { MergeInput } from './model.ts';

/** Hooks of a merge's steps (tests cut a step short here). */
export interface MergeHooks {
  /** After each move transaction, with the source and how many messages it moved. */
  afterMove?: (sourceId: string, moved: number) => void | Promise<void>;
}

/**
 * The merge job type's executor (decisions §20): one source per step, its
 * messages moved, then the close (flow.ts). The flow and what it uses
 * (messages, attachments and their S3 client) load on the first merge, from
 * a chunk of their own: a bulk job's step never loads them.
 */
export const mergeExecutor = (hooks: MergeHooks = {}): JobExecutor => ({
  chunkSize: 1,
  concurrency: 1,
  run: async (job, sourceId) => (await import('./flow.ts')).mergeSource(job.principal, sourceId, job.input as MergeInput, hooks),
});
