import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The clean-up consumer (handler.ts): a large ticket continues in a message on its own queue. */
export const cleanupSettings = defineSettings('functions/attachment-cleanup/handler.ts', z.object({ ATTACHMENT_CLEANUP_QUEUE_URL: z.string().check(z.minLength(1)) }));
