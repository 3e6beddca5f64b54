import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** Where the session secret comes from (shared/auth/secret.ts), read at the first token or cursor signed or verified. */
export const sessionSecretSettings = defineSettings(
  'shared/auth/secret.ts',
  z
    .object({
      /** Local stack: the HS256 secret itself. */
      SESSION_SECRET: z.optional(z.string().check(z.minLength(32))),
      /** Local stack and tests: the key before the last rotation, still accepted when verifying. */
      SESSION_SECRET_PREVIOUS: z.optional(z.string().check(z.minLength(32))),
      /** Deployed stack: the Secrets Manager secret that holds it. */
      SESSION_SECRET_ARN: z.optional(z.string().check(z.minLength(1))),
    })
    .check(z.refine((e) => e.SESSION_SECRET || e.SESSION_SECRET_ARN, { path: ['SESSION_SECRET_ARN'], message: 'SESSION_SECRET_ARN is required, or SESSION_SECRET locally' })),
);

/**
 * Which API stage's authorizer cache a change of credentials flushes
 * (shared/auth/authorizer-cache.ts). The CDK app sets all three on every
 * function that bundles the module (infra/api.ts; a test checks it); the
 * admin CLI takes them from the stack's outputs or the running local stack.
 * Unset (a process with no API in front of it): nothing to flush.
 */
export const authorizerCacheSettings = defineSettings(
  'shared/auth/authorizer-cache.ts',
  z
    .object({
      /** The REST API's id (its Ref; no cycle: the RestApi resource depends on no function, only its methods do). */
      AUTHORIZER_CACHE_REST_API_ID: z.optional(z.string().check(z.minLength(1))),
      /** The stage whose cache is flushed (`live`). */
      AUTHORIZER_CACHE_STAGE: z.optional(z.string().check(z.minLength(1))),
      /** The stage's authorizerCacheTtlSeconds: 0 means no cache, so no flush. */
      AUTHORIZER_CACHE_TTL_SECONDS: z.optional(z.coerce.number().check(z.int(), z.gte(0))),
    })
    .check(
      z.refine((e) => Boolean(e.AUTHORIZER_CACHE_REST_API_ID) === Boolean(e.AUTHORIZER_CACHE_STAGE), {
        path: ['AUTHORIZER_CACHE_STAGE'],
        message: 'AUTHORIZER_CACHE_REST_API_ID and AUTHORIZER_CACHE_STAGE go together',
      }),
    ),
);
