import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The reindex consumer (handler.ts): the next step of a job goes back on its own queue. */
export const reindexSettings = defineSettings('functions/reindex/handler.ts', z.object({ REINDEX_QUEUE_URL: z.string().check(z.minLength(1)) }));
