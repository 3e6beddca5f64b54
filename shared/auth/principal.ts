import * as z from 'zod';

export const USER_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];
export const PLANS = ['free', 'paid', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export type DeskRole = 'viewer' | 'agent' | 'admin';

/** Requests per calendar minute per account (api-spec Limits; decisions §4). */
export const PLAN_LIMITS: Record<Plan, number> = { free: 100, paid: 1000, enterprise: 10000 };

/** Who is calling: resolved by the authorizer, carried to the group functions in the request context. */
export const PrincipalSchema = z.object({
  accountId: z.string(),
  userId: z.string(),
  role: z.enum(USER_ROLES),
  plan: z.enum(PLANS),
  credential: z.enum(['api_key', 'session']),
});
export type Principal = z.infer<typeof PrincipalSchema>;

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

/** Whoever changes a ticket: a user's principal or an automation. */
export type Caller = Principal | SystemPrincipal;

export const isSystemCaller = (c: Caller): c is SystemPrincipal => 'system' in c;

/** Who acted, as ticket events record it (consumers skip what automations caused, so they never loop). */
export const actorOf = (c: Caller) => (isSystemCaller(c) ? { type: 'automation' as const, id: c.automationId } : { type: 'user' as const, id: c.userId });
