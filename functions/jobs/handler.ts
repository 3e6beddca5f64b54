import { bulkRoutes } from '#shared/bulk/contract.ts';
import * as bulk from '#shared/bulk/service.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { jobRoutes } from '#shared/jobs/contract.ts';
import * as jobs from '#shared/jobs/service.ts';
import { mergeRoutes } from '#shared/merge/contract.ts';
import * as merge from '#shared/merge/service.ts';
import { personalDataRoutes, retentionRoutes } from '#shared/privacy/contract.ts';
import { createDataExportJob, createErasureJob, withDownload } from '#shared/privacy/jobs.ts';
import { getRetentionSetting, setRetention } from '#shared/privacy/retention.ts';
import { jobsSettings } from './settings.ts';

/** A request's job runs from this queue. */
const queueUrl = jobsSettings().BULK_JOBS_QUEUE_URL;

export const handler = httpGroup([...bulkRoutes, ...mergeRoutes, ...jobRoutes, ...personalDataRoutes, ...retentionRoutes], {
  bulkUpdateTickets: async ({ principal, body }) => ({ job: await bulk.createBulkJob(principal, { type: 'bulk_update', ids: body.ids, change: body.ticket }, queueUrl) }),
  bulkDeleteTickets: async ({ principal, body }) => ({ job: await bulk.createBulkJob(principal, { type: 'bulk_delete', ids: body.ids }, queueUrl) }),
  mergeTickets: async ({ principal, params, body }) => ({ job: await merge.createMergeJob(principal, params.id, body, queueUrl) }),
  getJob: async ({ principal, params }) => ({ job: await withDownload(principal, await jobs.getJob(principal, params.id)) }),
  eraseContact: async ({ principal, params }) => ({ job: await createErasureJob(principal, params.id, queueUrl) }),
  exportContactData: async ({ principal, params }) => ({ job: await createDataExportJob(principal, params.id, queueUrl) }),
  getRetention: async ({ principal }) => ({ retention: await getRetentionSetting(principal) }),
  updateRetention: async ({ principal, body }) => ({ retention: await setRetention(principal, body.retention) }),
});
