import { hasDeskRole } from '../auth/principal.ts';
import type { SkipReason } from './model.ts';
import type { GroupRecord, Loads, MemberConfig } from './repository.ts';

/**
 * Distribution (decisions §9) as pure functions: given a group, its members'
 * open-ticket loads and the ticket, who gets the ticket, or nobody, and why.
 * No reads, no writes: the ticket-side writes (assignment.ts) and the
 * distribution test (service.ts) read the group and the loads, then ask here.
 * A distribution mode is one entry of MODES.
 */

/** decisions §9: an agent's open tickets are those assigned to them in these statuses. */
export const OPEN_STATUSES: readonly string[] = ['new', 'open', 'pending'];

/** What distribution reads of a group. */
export type DistributionGroup = Pick<GroupRecord, 'distributionMode' | 'isActive' | 'maxOpenTickets' | 'maxOpenTicketsGlobal' | 'members' | 'deletingAt'>;

/** A group that exists and is not being deleted. */
export const isLive = <G extends Pick<GroupRecord, 'deletingAt'>>(g: G | null): g is G => Boolean(g && !g.deletingAt);

/** Inactive, manual and deleted groups do not distribute. */
export const distributes = (g: Pick<GroupRecord, 'isActive' | 'distributionMode' | 'deletingAt'>) => g.isActive && g.distributionMode !== 'manual' && !g.deletingAt;

/** One member weighed for a ticket: why they cannot take it (null: they can), their loads and the cap that binds them. */
export interface Verdict {
  userId: string;
  reason: SkipReason | null;
  openTickets: number;
  openTicketsInGroup: number;
  cap: number | null;
  lastAssignedAt: string | null;
  addedAt: string;
}

/** The answer: the member who gets the ticket (with the cap their counter write is conditioned on), or null and why. */
export interface Distribution {
  assignee: { userId: string; cap: number | null } | null;
  /** Why nobody gets the ticket; null when someone does. */
  reason: string | null;
  /** Every member, in the order they were added, with why they were not chosen. */
  verdicts: Verdict[];
}

/**
 * The cap in this group that binds a member (decisions §9: their own and the
 * group's both apply, so the lower one; a tie names the member's).
 */
const capOf = (g: DistributionGroup, m: MemberConfig): { cap: number | null; kind: 'atMemberCap' | 'atGroupCap' } =>
  m.maxOpenTickets !== null && (g.maxOpenTickets === null || m.maxOpenTickets <= g.maxOpenTickets) ? { cap: m.maxOpenTickets, kind: 'atMemberCap' } : { cap: g.maxOpenTickets, kind: 'atGroupCap' };

/** Whose turn it is: the member whose last assignment in the group is oldest (never assigned first), then the earliest added. */
const turn = (a: Verdict, b: Verdict) => (a.lastAssignedAt ?? '').localeCompare(b.lastAssignedAt ?? '') || a.addedAt.localeCompare(b.addedAt) || a.userId.localeCompare(b.userId);
/** The fewest open tickets across groups, the turn breaking ties. */
const leastBusy = (a: Verdict, b: Verdict) => a.openTickets - b.openTickets || turn(a, b);

/** A distribution mode: the skills a member needs for a ticket (none unless given), and how the members who can take it are ordered (the first gets it). */
interface Mode {
  needs?: (tags: string[], groupSkills: Set<string>) => string[];
  order: (a: Verdict, b: Verdict) => number;
}

/**
 * The modes of decisions §9. Manual assigns nobody (the group refuses), but
 * its members are still weighed for the distribution test.
 */
const MODES: Record<GroupRecord['distributionMode'], Mode> = {
  manual: { order: leastBusy },
  roundRobin: { order: turn },
  leastBusy: { order: leastBusy },
  // Every tag of the ticket that is a skill of some member of the group.
  skills: { needs: (tags, groupSkills) => tags.filter((t) => groupSkills.has(t)), order: leastBusy },
};

/**
 * Weigh every member for a ticket with these tags: members who cannot take it
 * get their reason (not an active agent, a missing skill, at a cap, in that
 * order); the eligible one first in the mode's order is chosen and the other
 * eligible ones are `notNextInTurn`.
 */
function weigh(g: DistributionGroup, loads: Loads, tags: string[]): { chosen: Verdict | null; verdicts: Verdict[] } {
  const mode = MODES[g.distributionMode];
  const needed = mode.needs ? mode.needs(tags, new Set(Object.values(g.members).flatMap((m) => m.skills))) : [];
  const verdicts: Verdict[] = Object.entries(g.members).map(([userId, m]) => {
    const user = loads.users.get(userId);
    const { cap, kind } = capOf(g, m);
    const inGroup = loads.inGroup.get(userId) ?? { openTickets: 0, lastAssignedAt: null };
    const openTickets = loads.agent.get(userId) ?? 0;
    let reason: SkipReason | null = null;
    if (user?.status !== 'active' || !hasDeskRole(user.role, 'agent')) reason = 'inactiveUser';
    else if (!needed.every((s) => m.skills.includes(s))) reason = 'missingSkill';
    else if (cap !== null && inGroup.openTickets >= cap) reason = kind;
    else if (g.maxOpenTicketsGlobal !== null && openTickets >= g.maxOpenTicketsGlobal) reason = 'atGlobalCap';
    return { userId, reason, openTickets, openTicketsInGroup: inGroup.openTickets, cap, lastAssignedAt: inGroup.lastAssignedAt, addedAt: m.addedAt };
  });
  const eligible = verdicts.filter((v) => v.reason === null).sort(mode.order);
  const chosen = eligible[0] ?? null;
  for (const v of eligible.slice(1)) v.reason = 'notNextInTurn';
  verdicts.sort((a, b) => a.addedAt.localeCompare(b.addedAt) || a.userId.localeCompare(b.userId));
  return { chosen, verdicts };
}

/** Why a group gives nobody a ticket of this status, whoever its members are; null when it distributes it. */
function groupRefusal(g: DistributionGroup, status: string): string | null {
  if (!g.isActive) return 'the group is inactive';
  if (g.distributionMode === 'manual') return 'the group distributes manually';
  if (!OPEN_STATUSES.includes(status)) return `a ${status} ticket is not distributed`;
  return null;
}

/**
 * Who gets a ticket entering a group unassigned (decisions §9), and why
 * nobody does when nobody does. Members are weighed even when the group
 * refuses (manual, inactive), so the distribution test can show them.
 */
export function distribute(g: DistributionGroup, loads: Loads, ticket: { tags: string[]; status: string }): Distribution {
  const { chosen, verdicts } = weigh(g, loads, ticket.tags);
  const refusal = groupRefusal(g, ticket.status);
  if (refusal) return { assignee: null, reason: refusal, verdicts };
  if (chosen) return { assignee: { userId: chosen.userId, cap: chosen.cap }, reason: null, verdicts };
  return { assignee: null, reason: verdicts.length ? 'no member can take the ticket' : 'the group has no members', verdicts };
}
