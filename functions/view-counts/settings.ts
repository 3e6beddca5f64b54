import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The background count (recount.ts) queues its next step on its own queue; the scheduled pass (pass.ts) queues its first steps there. */
export const recountSettings = defineSettings('functions/view-counts/recount.ts', z.object({ VIEW_RECOUNT_QUEUE_URL: z.string().check(z.minLength(1)) }));
export const passSettings = defineSettings('functions/view-counts/pass.ts', z.object({ VIEW_RECOUNT_QUEUE_URL: z.string().check(z.minLength(1)) }));
