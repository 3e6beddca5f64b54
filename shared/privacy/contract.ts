import { defineRoutes } from '../http/contract.ts';
import { JobEnvelope } from '../jobs/model.ts';
import { ContactIdParamsSchema, RetentionBodySchema, RetentionEnvelope } from './model.ts';

const AS_JOB = 'Answers 202 with the job at once; GET /v1/jobs/{id} shows it as it progresses. Jobs are kept 7 days.';

/** Privacy (decisions §23): erasure and a person's data as jobs, served by the jobs function (it sends to the bulk-jobs queue). */
export const personalDataRoutes = defineRoutes([
  {
    operationId: 'eraseContact',
    method: 'POST',
    path: '/helpdesk/api/v1/contacts/{id}/erase',
    group: 'jobs',
    summary: "Erase a contact's personal data",
    description:
      `Erases the contact everywhere (GDPR Article 17): when the job completes the contact is gone (GET 404, the export shows it deleted); the tickets they requested keep their ids, status and fields with requesterName "Erased contact" and requesterEmail null; ` +
      'the messages they wrote read [erased] with no attachments, whose files and the raw mail are deleted; no search finds their name or email; audit values that held them read [erased]. ' +
      `The erasure is audited (resource.type contact, no personal values) and its events carry none. Mail received later from the same address makes a new contact. ${AS_JOB}`,
    access: 'admin',
    params: ContactIdParamsSchema,
    creates: true,
    success: { status: 202, description: 'The erasure job, queued', schema: JobEnvelope },
    errors: [403, 404, 409, 422],
  },
  {
    operationId: 'exportContactData',
    method: 'POST',
    path: '/helpdesk/api/v1/contacts/{id}/data_export',
    group: 'jobs',
    summary: "Export a contact's personal data",
    description: `Gathers everything the account holds about the contact (GDPR Article 15) into one JSON document {contact, tickets, messages}; the completed job has download {url, expiresAt} (a presigned URL, 15 minutes, fresh on every read of the job). ${AS_JOB}`,
    access: 'admin',
    params: ContactIdParamsSchema,
    creates: true,
    success: { status: 202, description: 'The export job, queued', schema: JobEnvelope },
    errors: [403, 404, 409, 422],
  },
]);

/** Privacy (decisions §23): the retention of closed tickets, served by the jobs function. */
export const retentionRoutes = defineRoutes([
  {
    operationId: 'getRetention',
    method: 'GET',
    path: '/helpdesk/api/v1/retention',
    group: 'jobs',
    summary: 'Get the retention setting',
    description: 'How many days after closing a ticket is deleted (null: kept, the default).',
    access: 'admin',
    success: { status: 200, description: 'The retention setting', schema: RetentionEnvelope },
    errors: [403],
  },
  {
    operationId: 'updateRetention',
    method: 'PUT',
    path: '/helpdesk/api/v1/retention',
    group: 'jobs',
    summary: 'Set the retention of closed tickets',
    description:
      'closedTicketsDeleteAfterDays 30-3650, or null to keep closed tickets. A daily sweep deletes the tickets closed longer ago than that, as DELETE /v1/tickets/{id} would (ticket.deleted, audit via "retention"), in bounded batches.',
    access: 'admin',
    body: RetentionBodySchema,
    wrapper: 'retention',
    success: { status: 200, description: 'The retention setting', schema: RetentionEnvelope },
    errors: [400, 403, 422],
  },
]);
