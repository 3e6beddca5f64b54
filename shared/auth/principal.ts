import * as z from '../zod.ts';
import { encodeScopes, SCOPES } from './scopes.ts';

export const USER_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];
export const USER_STATUSES = ['active', 'invited', 'suspended'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
export const PLANS = ['free', 'paid', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export type DeskRole = 'viewer' | 'agent' | 'admin';

/** Requests per calendar minute per account (api-spec Limits; decisions §4). */
export const PLAN_LIMITS: Record<Plan, number> = { free: 100, paid: 1000, enterprise: 10000 };

/**
 * Who is calling: resolved by the authorizer, carried to the group functions
 * in the request context (parsed from it by this schema). An API key's
 * principal also carries the key's scopes (absent: every scope, as a session
 * token has) and its expiry, so that an answer the authorizer cache keeps is
 * still checked against both on every request (shared/http/middleware.ts).
 */
export const PrincipalSchema = z.object({
  accountId: z.string(),
  userId: z.string(),
  role: z.enum(USER_ROLES),
  plan: z.enum(PLANS),
  credential: z.enum(['api_key', 'session']),
  /** Context values are strings: the scopes space-separated (principalContext). */
  scopes: z.optional(
    z.pipe(
      z.pipe(
        z.string(),
        z.transform((s) => s.split(' ')),
      ),
      z.array(z.enum(SCOPES)).check(z.minLength(1)),
    ),
  ),
  /** When the API key stops working (ISO 8601); absent: never. */
  keyExpiresAt: z.optional(z.iso.datetime()),
  /** The account's field-definitions stamp, when the authorizer's answers are cached (shared/ticket-fields/stamp.ts). */
  fieldsStamp: z.optional(z.coerce.number().check(z.int(), z.nonnegative())),
});
export type Principal = z.infer<typeof PrincipalSchema>;

/** The principal as the authorizer's answer carries it: context values must be strings, numbers or booleans. */
export function principalContext(p: Principal): Record<string, string> {
  const { scopes, keyExpiresAt, fieldsStamp, ...rest } = p;
  return { ...rest, ...(scopes ? { scopes: encodeScopes(scopes) } : {}), ...(keyExpiresAt ? { keyExpiresAt } : {}), ...(fieldsStamp !== undefined ? { fieldsStamp: String(fieldsStamp) } : {}) };
}

/** Whether the calling API key has expired by `now` (a session token's expiry is checked when it is verified). */
export const keyExpired = (p: Pick<Principal, 'keyExpiresAt'>, now = Date.now()) => p.keyExpiresAt !== undefined && Date.parse(p.keyExpiresAt) <= now;

/** What a request with an expired key is told (the authorizer and the middleware say the same). */
export const keyExpiredMessage = (expiresAt: string) => `The API key expired at ${expiresAt}; create a new key`;

/** decisions §1: owner and admin -> admin, member -> agent, viewer -> viewer. */
export function deskRole(role: UserRole): DeskRole {
  return role === 'owner' || role === 'admin' ? 'admin' : role === 'member' ? 'agent' : 'viewer';
}

const DESK_RANK: Record<DeskRole, number> = { viewer: 0, agent: 1, admin: 2 };
export const hasDeskRole = (role: UserRole, needed: DeskRole) => DESK_RANK[deskRole(role)] >= DESK_RANK[needed];

/**
 * An automation acting on its account's tickets (decisions §8). It is not a
 * user: it has no role, and it is the only caller that may set `closed`.
 */
export interface SystemPrincipal {
  accountId: string;
  system: 'automation';
  automationId: string;
}

/**
 * An inbound mail changing its ticket (decisions §17: a reply reopens a
 * pending or resolved ticket). Not a user and not an automation: its events
 * name no actor, so automations react to them as to any customer's change.
 */
export interface MailCaller {
  accountId: string;
  mail: true;
}

/** Whoever changes a ticket: a user's principal, an automation or an inbound mail. */
export type Caller = Principal | SystemPrincipal | MailCaller;

export const isSystemCaller = (c: Caller): c is SystemPrincipal => 'system' in c;
export const isMailCaller = (c: Caller): c is MailCaller => 'mail' in c;

/** Who acted, as ticket events record it (consumers skip what automations caused, so they never loop); none for a mail. */
export const actorOf = (c: Caller) => (isSystemCaller(c) ? { type: 'automation' as const, id: c.automationId } : isMailCaller(c) ? undefined : { type: 'user' as const, id: c.userId });
