import type { Audit } from '../audits/model.ts';
import { ValidationError } from '../domain/errors.ts';
import type { TicketEdit } from '../tickets/service.ts';
import type { Job, BulkTicketChange, JobResult } from './model.ts';
import type { JobRecord, StoredResult } from './repository.ts';

/**
 * The rules of a bulk job as pure functions (no I/O): which tickets a step
 * takes, what a bulk change makes of each ticket, whether a ticket of a chunk
 * cut short was already changed, and the job as the API answers it. The
 * service reads, decides with these and writes; test/unit/bulk-jobs.test.ts
 * holds their tables.
 */

/** A ticket has at most this many distinct tags (decisions §6; the PUT's schema says the same). */
export const MAX_TICKET_TAGS = 100;

/** Each id once, in the order first given (decisions §16: duplicates count once). */
export const distinctIds = (ids: readonly string[]): string[] => [...new Set(ids)];

/** A ticket's tags after a bulk edit: the removed ones left out, the added ones appended (those it has stay where they are). */
export function editedTags(current: readonly string[], add: readonly string[] = [], remove: readonly string[] = []): string[] {
  const kept = current.filter((t) => !remove.includes(t));
  return [...kept, ...add.filter((t) => !kept.includes(t))];
}

/**
 * What a bulk_update applies to one ticket, as the ticket service takes it:
 * the fields as given, or, with addTags/removeTags, a function of the ticket
 * as each attempt reads it (a retry after a conflict re-applies the edit to
 * the tags as they then are, so a concurrent change is never lost).
 */
export function ticketEdit(change: BulkTicketChange): TicketEdit {
  const { addTags, removeTags, ...fields } = change;
  if (addTags === undefined && removeTags === undefined) return fields;
  return (current) => {
    const tags = editedTags(current.tags, addTags, removeTags);
    if (tags.length > MAX_TICKET_TAGS)
      throw new ValidationError(`Invalid ticket: tags: at most ${MAX_TICKET_TAGS} distinct tags per ticket`, [{ field: 'tags', message: `at most ${MAX_TICKET_TAGS} distinct tags per ticket` }]);
    return { ...fields, tags };
  };
}

/** The positions (in `ids`) a step takes: the first `size` without a result. */
export function nextChunk(job: Pick<JobRecord, 'results'>, size: number): number[] {
  const pending: number[] = [];
  for (let at = 0; at < job.results.length && pending.length < size; at++) if (!job.results[at]) pending.push(at);
  return pending;
}

/**
 * Whether a claimed ticket was already changed by this job in a step that
 * was cut short before recording it: a change committed after the version
 * claimed, through a bulk job, by the job's caller. The ticket's version
 * orders its audits (decisions §15), so the audits after the claim are all
 * the changes since. A claim of 0 (the ticket was not found) was never done.
 */
export function changedByJob(claimedVersion: number, auditsSince: readonly Pick<Audit, 'via' | 'actor'>[], userId: string): boolean {
  return claimedVersion > 0 && auditsSince.some((a) => a.via === 'bulk' && a.actor.type === 'user' && a.actor.id === userId);
}

/** The job's results and counts once a chunk's results (by position) are added; `complete` when every ticket has one. */
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
