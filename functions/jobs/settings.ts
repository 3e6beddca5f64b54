import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The jobs API (handler.ts): a bulk request queues its job's first step on the bulk-jobs queue. */
export const jobsSettings = defineSettings('functions/jobs/handler.ts', z.object({ BULK_JOBS_QUEUE_URL: z.string().check(z.minLength(1)) }));
