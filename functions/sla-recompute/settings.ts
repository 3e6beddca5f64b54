import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The recompute consumer (handler.ts): the next page of a recompute goes back on its own queue. */
export const recomputeSettings = defineSettings('functions/sla-recompute/handler.ts', z.object({ SLA_RECOMPUTE_QUEUE_URL: z.string().check(z.minLength(1)) }));
