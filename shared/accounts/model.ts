import * as z from '../zod.ts';
import { SCOPES, type Scope } from '../auth/scopes.ts';
import { plainText } from '../text.ts';

const timestamp = z.describe(z.iso.datetime(), 'ISO 8601 UTC');

export const ScopeSchema = z.enum(SCOPES, { error: `must be one of ${SCOPES.join(', ')}` });

/**
 * A key's expiry as the API and the admin CLI take it: ISO 8601 with a time
 * zone, in the future and at most a year ahead (checked against the clock when
 * the request is validated).
 */
export const ExpiresAtSchema = z
  .pipe(
    z.iso.datetime({ offset: true, error: 'must be an ISO 8601 time with a time zone, e.g. 2026-12-31T00:00:00Z' }),
    z.transform((s) => new Date(s).toISOString()),
  )
  .check(
    z.refine((s) => Date.parse(s) > Date.now(), 'must be in the future'),
    z.refine((s) => Date.parse(s) <= oneYearAhead(), 'must be at most 1 year ahead'),
  );

/** One calendar year from `now`: the furthest a key's expiry may be (decisions §18). */
export function oneYearAhead(now = new Date()): number {
  const d = new Date(now);
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  return d.getTime();
}

/**
 * A non-empty list of scopes. An unknown one is reported on `scopes` itself
 * (the user-management envelope names the body attribute), while the
 * published schema still lists the values.
 */
export const ScopesSchema = z.meta(
  z.pipe(
    z.array(z.string()).check(
      z.minLength(1, 'must name at least one scope'),
      z.maxLength(SCOPES.length, `at most ${SCOPES.length} scopes`),
      z.superRefine((list, ctx) => {
        const unknown = list.find((s) => !(SCOPES as readonly string[]).includes(s));
        if (unknown !== undefined) ctx.addIssue({ code: 'custom', message: `unknown scope ${JSON.stringify(unknown).slice(0, 80)}; each must be one of ${SCOPES.join(', ')}` });
      }),
    ),
    z.transform((list) => list as Scope[]),
  ),
  { items: { type: 'string', enum: [...SCOPES] } },
);

/** An API key as the user-management interface shows it (snake_case; never the key, only on creation). */
export const ApiKeySchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed key_'),
    name: z.string(),
    scopes: z.describe(z.array(ScopeSchema), 'users:read allows GET under /playbook, users:write every method there; desk:read and desk:write the same under /helpdesk'),
    expires_at: z.describe(z.nullable(timestamp), 'After this the key is refused (401); null: never'),
    created_at: timestamp,
    last_used_at: z.describe(z.nullable(timestamp), 'When the key was first used in the latest hour it was used: kept to the hour, not per request'),
    user_id: z.describe(z.string(), 'The user the key acts as, with that user’s role'),
  }),
  { id: 'ApiKey' },
);
export type ApiKeyDto = z.infer<typeof ApiKeySchema>;

export const CreatedApiKeySchema = z.meta(
  z.extend(ApiKeySchema, {
    key: z.describe(z.string(), '`sk_` + 40 base62 characters. Shown only in this answer: only its SHA-256 is stored.'),
  }),
  { id: 'CreatedApiKey' },
);

export const ApiKeyListSchema = z.meta(z.object({ data: z.array(ApiKeySchema) }), { id: 'ApiKeyList' });

export const CreateApiKeyBodySchema = z.meta(
  z.object({
    name: plainText(100),
    scopes: z.describe(z.optional(ScopesSchema), 'Default: all four'),
    expires_at: z.describe(z.optional(z.nullable(ExpiresAtSchema)), 'Default: the key does not expire'),
    user_id: z.describe(z.optional(z.string().check(z.minLength(1), z.maxLength(64))), 'Owners and admins only: the user the key acts as (default: the caller)'),
  }),
  { id: 'CreateApiKeyRequest' },
);
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBodySchema>;

export const ApiKeyIdParamsSchema = z.object({ key_id: z.string().check(z.minLength(1), z.maxLength(64)) });
