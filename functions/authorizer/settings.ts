import * as z from 'zod';
import { defineSettings } from '#shared/config/settings.ts';

/** The REQUEST authorizer (handler.ts), at load. */
export const authorizerSettings = defineSettings(
  'functions/authorizer/handler.ts',
  z.object({
    /** Usage-plan key for requests without a valid credential (deployed stacks set it; the local gateway has no usage plans). */
    ANONYMOUS_USAGE_KEY: z.string().min(1).optional(),
    /** Seconds API Gateway caches this authorizer's answers (stage setting authorizerCacheTtlSeconds); 0: no caching. */
    AUTHORIZER_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).default(0),
  }),
);
