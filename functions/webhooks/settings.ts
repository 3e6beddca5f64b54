import * as z from 'zod';
import { defineSettings } from '#shared/config/settings.ts';

/** The webhooks API (handler.ts): redelivery puts a message on the delivery queue. */
export const webhooksSettings = defineSettings('functions/webhooks/handler.ts', z.object({ WEBHOOK_DELIVERY_QUEUE_URL: z.string().min(1) }));
