import { defineRoutes } from '../http/contract.ts';
import { JobEnvelope, JobIdParamsSchema } from './model.ts';

/** A job (decisions §16): made by a bulk request or a merge (their own contracts), read here as it progresses. */
export const jobRoutes = defineRoutes([
  {
    operationId: 'getJob',
    method: 'GET',
    path: '/helpdesk/api/v1/jobs/{id}',
    group: 'jobs',
    summary: 'Get a job',
    description: "A job of the caller's account (a bulk action, a merge): queued, running (results grow as its items are done) or completed. Another account's job is not found.",
    access: 'viewer',
    params: JobIdParamsSchema,
    success: { status: 200, description: 'The job', schema: JobEnvelope },
    errors: [403, 404],
  },
]);
