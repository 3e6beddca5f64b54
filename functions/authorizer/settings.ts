import * as z from '#shared/zod.ts';
import { defineSettings } from '#shared/config/settings.ts';

/** The REQUEST authorizer (handler.ts), at load. */
export const authorizerSettings = defineSettings(
  'functions/authorizer/handler.ts',
  z.object({
    /** Usage-plan key for requests without a valid credential (deployed stacks set it; the local gateway has no usage plans). */
    ANONYMOUS_USAGE_KEY: z.optional(z.string().check(z.minLength(1))),
    /** Seconds API Gateway caches this authorizer's answers (stage setting authorizerCacheTtlSeconds); 0: no caching. */
    AUTHORIZER_CACHE_TTL_SECONDS: z._default(z.coerce.number().check(z.int(), z.gte(0)), 0),
  }),
);
