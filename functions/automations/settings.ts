import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The hourly time-rules job (time-rules.ts) queues batches of open tickets. */
export const timeRulesSettings = defineSettings('functions/automations/time-rules.ts', z.object({ AUTOMATION_TIME_RULES_QUEUE_URL: z.string().check(z.minLength(1)) }));
