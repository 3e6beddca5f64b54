import * as z from 'zod';
import { defineSettings } from '#shared/config/settings.ts';

/** The views API (handler.ts): a new or edited view queues its background count on the view-recount queue. */
export const viewsSettings = defineSettings('functions/views/handler.ts', z.object({ VIEW_RECOUNT_QUEUE_URL: z.string().min(1) }));
