import { bulkRoutes } from '#shared/bulk/contract.ts';
import * as bulk from '#shared/bulk/service.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { jobRoutes } from '#shared/jobs/contract.ts';
import * as jobs from '#shared/jobs/service.ts';
import { mergeRoutes } from '#shared/merge/contract.ts';
import * as merge from '#shared/merge/service.ts';
import { jobsSettings } from './settings.ts';

/** A request's job runs from this queue. */
const queueUrl = jobsSettings().BULK_JOBS_QUEUE_URL;

export const handler = httpGroup([...bulkRoutes, ...mergeRoutes, ...jobRoutes], {
  bulkUpdateTickets: async ({ principal, body }) => ({ job: await bulk.createBulkJob(principal, { type: 'bulk_update', ids: body.ids, change: body.ticket }, queueUrl) }),
  bulkDeleteTickets: async ({ principal, body }) => ({ job: await bulk.createBulkJob(principal, { type: 'bulk_delete', ids: body.ids }, queueUrl) }),
  mergeTickets: async ({ principal, params, body }) => ({ job: await merge.createMergeJob(principal, params.id, body, queueUrl) }),
  getJob: async ({ principal, params }) => ({ job: await jobs.getJob(principal, params.id) }),
});
