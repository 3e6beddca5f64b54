import { ticketAuditsAfter } from '../audits/service.ts';
import type { Principal } from '../auth/principal.ts';
import type { Job } from '../jobs/model.ts';
import { createJob, type JobExecutor } from '../jobs/service.ts';
import { deleteTicket, findTicket, updateTicket } from '../tickets/service.ts';
import type { BulkTicketChange } from './model.ts';
import { changedByJob, ticketEdit } from './rules.ts';

/**
 * Bulk actions (decisions §16) as two job types of the runner
 * (shared/jobs/service.ts). Each ticket is changed as a single PUT or DELETE
 * by the job's caller would change it, through the ticket service. Before a
 * chunk runs the runner records each ticket's version (the claim); a chunk
 * cut short is resumed skipping each ticket whose audits show this job's
 * change after that version, so no ticket is changed twice.
 */

export type BulkRequest = { type: 'bulk_update'; ids: string[]; change: BulkTicketChange } | { type: 'bulk_delete'; ids: string[] };

/** Create a bulk job and queue its first step (createJob). */
export const createBulkJob = (p: Principal, request: BulkRequest, queueUrl: string): Promise<Job> =>
  createJob(p, { type: request.type, ids: request.ids, input: request.type === 'bulk_update' ? request.change : null }, queueUrl);

/** A ticket's claim: its version before the chunk (0: not found). */
const claimVersion: JobExecutor['claim'] = async (job, ticketId) => (await findTicket(job.accountId, ticketId))?.version ?? 0;

/** Whether a step cut short already changed this ticket (its audits after the claimed version show this job's caller via bulk). */
const alreadyDone = async (accountId: string, ticketId: string, claim: { value: number; resumed: boolean } | null, userId: string) =>
  !!claim?.resumed && changedByJob(claim.value, await ticketAuditsAfter(accountId, ticketId, claim.value), userId);

/** The executors of bulk_update and bulk_delete, for the consumer's table of job types. */
export const bulkExecutors = {
  bulk_update: {
    claim: claimVersion,
    run: async (job, ticketId, claim) => {
      if (await alreadyDone(job.accountId, ticketId, claim, job.principal.userId)) return;
      await updateTicket(job.principal, ticketId, ticketEdit(job.input as BulkTicketChange), { via: 'bulk' });
    },
  },
  bulk_delete: {
    claim: claimVersion,
    run: async (job, ticketId, claim) => {
      if (await alreadyDone(job.accountId, ticketId, claim, job.principal.userId)) return;
      await deleteTicket(job.principal, ticketId, { via: 'bulk' });
    },
  },
} satisfies Record<'bulk_update' | 'bulk_delete', JobExecutor>;
