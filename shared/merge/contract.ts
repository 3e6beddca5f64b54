import { defineRoutes } from '../http/contract.ts';
import { JobEnvelope } from '../jobs/model.ts';
import { TicketIdParamsSchema } from '../tickets/model.ts';
import { MergeBodySchema } from './model.ts';

/** Ticket merge (decisions §20): a job, read through GET /v1/jobs/{id} (shared/jobs/contract.ts). */
export const mergeRoutes = defineRoutes([
  {
    operationId: 'mergeTickets',
    method: 'POST',
    path: '/helpdesk/api/v1/tickets/{id}/merge',
    group: 'jobs',
    summary: 'Merge tickets into this one',
    description:
      'Answers 202 with a job (type merge, one result per source), followed through GET /v1/jobs/{id}. For each source in turn: its messages move to this ticket (same ids and createdAt, their attachments with them; ' +
      'GET /messages/{id} then names this ticket), then one transaction closes the source (status closed, mergedInto this ticket, a note) and gives this ticket the union of the tags and a note, with ticket.updated for both, ticket.merged and audits via merge. ' +
      "A job cut short resumes where it stopped: a message is never lost nor on both tickets. A reply by mail to a merged source's thread lands here. " +
      'Refused at once: this ticket closed (422 TICKET_CLOSED), this ticket among the sources or more than 25 ids (422 naming ids), this ticket not found (404). ' +
      "Per source, as its result: another account's or a missing ticket (NOT_FOUND), a closed or already merged one (TICKET_CLOSED).",
    access: 'agent',
    params: TicketIdParamsSchema,
    body: MergeBodySchema,
    creates: true,
    success: { status: 202, description: 'The job, queued', schema: JobEnvelope },
    errors: [400, 403, 404, 409, 422],
  },
]);
