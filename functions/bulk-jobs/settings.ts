import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The bulk-jobs consumer (handler.ts): a job's next step goes back on its own queue. */
export const bulkJobsSettings = defineSettings('functions/bulk-jobs/handler.ts', z.object({ BULK_JOBS_QUEUE_URL: z.string().check(z.minLength(1)) }));
