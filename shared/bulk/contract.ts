import { defineRoutes } from '../http/contract.ts';
import { JobEnvelope } from '../jobs/model.ts';
import { BulkDeleteBodySchema, BulkUpdateBodySchema } from './model.ts';

const TICKETS = '/helpdesk/api/v1/tickets';

const AS_JOB =
  'Answers 202 with the job at once; the tickets are changed in the background, a few at a time, and GET /v1/jobs/{id} shows the job as it progresses. ' +
  'Each ticket goes through the same rules, transaction, events, audit (via "bulk"), automations and SLA as a single request for it would; one ticket that fails (its error code and message in results) never stops the others. ' +
  'Duplicate ids count once; an id the account does not have fails as NOT_FOUND. The request counts once against the rate limit, whatever the number of tickets. Jobs are kept 7 days.';

/** Bulk actions as jobs (decisions §16): the two bulk endpoints create a job, GET /v1/jobs/{id} (shared/jobs/contract.ts) reads it. */
export const bulkRoutes = defineRoutes([
  {
    operationId: 'bulkUpdateTickets',
    method: 'POST',
    path: `${TICKETS}/bulk_update`,
    group: 'jobs',
    summary: 'Update up to 100 tickets',
    description: `Applies the given fields to each ticket as PUT /v1/tickets/{id} would (tags replaces the tags; addTags/removeTags edit each ticket's own). ${AS_JOB}`,
    access: 'agent',
    body: BulkUpdateBodySchema,
    wrapper: 'ticket',
    creates: true,
    success: { status: 202, description: 'The job, queued', schema: JobEnvelope },
    errors: [400, 403, 409, 422],
  },
  {
    operationId: 'bulkDeleteTickets',
    method: 'POST',
    path: `${TICKETS}/bulk_delete`,
    group: 'jobs',
    summary: 'Delete up to 100 tickets',
    description: `Deletes each ticket as DELETE /v1/tickets/{id} would (ticket.deleted, its audit). ${AS_JOB}`,
    access: 'agent',
    body: BulkDeleteBodySchema,
    creates: true,
    success: { status: 202, description: 'The job, queued', schema: JobEnvelope },
    errors: [400, 403, 409, 422],
  },
]);
