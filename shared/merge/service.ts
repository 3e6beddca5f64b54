import type { Principal } from '../auth/principal.ts';
import { RuleViolationError, ValidationError } from '../domain/errors.ts';
import type { Job } from '../jobs/model.ts';
import { createJob } from '../jobs/service.ts';
import { getTicket } from '../tickets/service.ts';
import type { MergeBody, MergeInput } from './model.ts';

/**
 * Ticket merge (decisions §20), a flow above the modules it uses (tickets,
 * messages, attachments, audits, search, events), run as a job of the runner
 * (shared/jobs): one item per source. For each source its messages move to
 * the target first, a transaction per batch (each message's copies and both
 * counts at once, so a message is never lost nor on both tickets); then one
 * transaction closes the source and changes the target, with their notes,
 * events and audits. Every step reads what is stored, so a step cut short
 * (between two moves, or between the last move and the close) resumes where
 * it stopped; a source already merged into the target is done. This file is
 * the request's side (the jobs API); the steps are executor.ts and flow.ts.
 */

/**
 * POST /v1/tickets/{id}/merge: the refusals of decisions §20 at once, then
 * the job (createJob: written, its first step queued).
 */
export async function createMergeJob(p: Principal, targetId: string, body: MergeBody, queueUrl: string): Promise<Job> {
  if (body.ids.includes(targetId)) throw new ValidationError('Invalid merge: ids: the target cannot be one of the sources', [{ field: 'ids', message: 'must not contain the target ticket' }]);
  const target = await getTicket(p, targetId);
  if (target.status === 'closed') throw new RuleViolationError('TICKET_CLOSED', 'A closed ticket cannot be merged into', { asInput: true });
  const input: MergeInput = { targetId, targetComment: body.targetComment ?? null, sourceComment: body.sourceComment ?? null };
  return createJob(p, { type: 'merge', ids: body.ids, input }, queueUrl);
}
