import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The SLA policies API (handler.ts): a recompute hands its batches to the recompute queue. */
export const slaPoliciesSettings = defineSettings('functions/sla-policies/handler.ts', z.object({ SLA_RECOMPUTE_QUEUE_URL: z.string().check(z.minLength(1)) }));
