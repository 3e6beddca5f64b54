import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The views API (handler.ts): a new or edited view queues its background count on the view-recount queue. */
export const viewsSettings = defineSettings('functions/views/handler.ts', z.object({ VIEW_RECOUNT_QUEUE_URL: z.string().check(z.minLength(1)) }));
