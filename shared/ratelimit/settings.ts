import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** The rate limiter (limiter.ts), at the first request counted. */
export const rateLimitSettings = defineSettings(
  'shared/ratelimit/limiter.ts',
  z.object({
    /** The counters table (shared/db/table-definition.ts COUNTER_TABLE): no stream, TTL. */
    RATE_LIMIT_TABLE_NAME: z.string().check(z.minLength(1)),
  }),
);
