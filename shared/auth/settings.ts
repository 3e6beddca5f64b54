import * as z from 'zod';
import { defineSettings } from '../config/settings.ts';

/** Where the session secret comes from (shared/auth/secret.ts), read at the first token or cursor signed or verified. */
export const sessionSecretSettings = defineSettings(
  'shared/auth/secret.ts',
  z
    .object({
      /** Local stack: the HS256 secret itself. */
      SESSION_SECRET: z.string().min(32).optional(),
      /** Local stack and tests: the key before the last rotation, still accepted when verifying. */
      SESSION_SECRET_PREVIOUS: z.string().min(32).optional(),
      /** Deployed stack: the Secrets Manager secret that holds it. */
      SESSION_SECRET_ARN: z.string().min(1).optional(),
    })
    .refine((e) => e.SESSION_SECRET || e.SESSION_SECRET_ARN, { path: ['SESSION_SECRET_ARN'], message: 'SESSION_SECRET_ARN is required, or SESSION_SECRET locally' }),
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
      AUTHORIZER_CACHE_REST_API_ID: z.string().min(1).optional(),
      /** The stage whose cache is flushed (`live`). */
      AUTHORIZER_CACHE_STAGE: z.string().min(1).optional(),
      /** The stage's authorizerCacheTtlSeconds: 0 means no cache, so no flush. */
      AUTHORIZER_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).optional(),
    })
    .refine((e) => Boolean(e.AUTHORIZER_CACHE_REST_API_ID) === Boolean(e.AUTHORIZER_CACHE_STAGE), {
      path: ['AUTHORIZER_CACHE_STAGE'],
      message: 'AUTHORIZER_CACHE_REST_API_ID and AUTHORIZER_CACHE_STAGE go together',
    }),
);
