import * as z from '../zod.ts';

/**
 * The job types (decisions §16, §20): the names the API answers in `type`.
 * Each has an executor, supplied to the runner by the consumer that runs the
 * jobs (functions/bulk-jobs/executors.ts); adding a type is its name here and
 * its executor there (docs/architecture.md).
 */
export const JOB_TYPES = ['bulk_update', 'bulk_delete', 'merge', 'erasure', 'data_export'] as const;
export type JobType = (typeof JOB_TYPES)[number];
export const JOB_STATUSES = ['queued', 'running', 'completed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JobResultSchema = z.object({
  id: z.describe(z.string(), 'The item (a ticket id), as given'),
  status: z.enum(['ok', 'error']),
  error: z.describe(
    z.optional(z.object({ code: z.string(), message: z.string() })),
    'On error: the code and message a single request for this item would have answered (NOT_FOUND, TICKET_CLOSED, VALIDATION_ERROR, …)',
  ),
});
export type JobResult = z.infer<typeof JobResultSchema>;

export const JobSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed job_'),
    type: z.enum(JOB_TYPES),
    status: z.describe(z.enum(JOB_STATUSES), 'queued until a worker takes it, running while its items are being done, completed once every item has its result'),
    total: z.describe(z.number().check(z.int()), 'Distinct items (ticket ids)'),
    succeeded: z.number().check(z.int()),
    failed: z.number().check(z.int()),
    results: z.describe(z.array(JobResultSchema), 'One per item done so far, in the order the ids were given'),
    createdAt: z.iso.datetime(),
    completedAt: z.nullable(z.iso.datetime()),
    download: z.describe(
      z.optional(
        z.object({ url: z.describe(z.url(), 'Presigned GET URL of the document, fresh on every read of the job'), expiresAt: z.describe(z.iso.datetime(), 'When url stops working (15 minutes)') }),
      ),
      "A completed data_export's document (decisions §23); absent for other jobs",
    ),
  }),
  { id: 'Job' },
);
export type Job = z.infer<typeof JobSchema>;

export const JobEnvelope = z.meta(z.object({ job: JobSchema }), { id: 'JobResponse' });

export const JobIdParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });
