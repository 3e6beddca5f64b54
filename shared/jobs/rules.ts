import type { Job, JobResult } from './model.ts';
import type { JobRecord, StoredResult } from './repository.ts';

/**
 * The rules of the job runner as pure functions (no I/O): the items a step
 * takes, the job once a chunk's results are added, and the job as the API
 * answers it. test/unit/bulk-jobs.test.ts holds their tables.
 */

/** Each id once, in the order first given (decisions §16: duplicates count once). */
export const distinctIds = (ids: readonly string[]): string[] => [...new Set(ids)];

/** The positions (in `ids`) a step takes: the first `size` without a result. */
export function nextChunk(job: Pick<JobRecord, 'results'>, size: number): number[] {
  const pending: number[] = [];
  for (let at = 0; at < job.results.length && pending.length < size; at++) if (!job.results[at]) pending.push(at);
  return pending;
}

/** The job's results and counts once a chunk's results (by position) are added; `complete` when every item has one. */
export function withResults(job: Pick<JobRecord, 'results'>, chunk: ReadonlyMap<number, StoredResult>) {
  const results = job.results.map((r, at) => chunk.get(at) ?? r);
  return {
    results,
    succeeded: results.filter((r) => r?.status === 'ok').length,
    failed: results.filter((r) => r?.status === 'error').length,
    complete: results.every((r) => r !== null),
  };
}

/** The job as GET /v1/jobs/{id} answers it: the results so far, in the order of the ids. */
export function toJobDto(job: JobRecord): Job {
  const results: JobResult[] = job.ids.flatMap((id, at) => {
    const r = job.results[at];
    return r ? [{ id, ...r }] : [];
  });
  return {
    id: job.id,
    type: job.type,
    status: job.status,
    total: job.ids.length,
    succeeded: job.succeeded,
    failed: job.failed,
    results,
    createdAt: job.createdAt,
    completedAt: job.completedAt,
  };
}
