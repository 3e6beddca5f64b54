import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The fan-out consumer (handler.ts) puts one message per subscribed webhook on the delivery queue. */
export const fanoutSettings = defineSettings('functions/webhook-fanout/handler.ts', z.object({ WEBHOOK_DELIVERY_QUEUE_URL: z.string().check(z.minLength(1)) }));
