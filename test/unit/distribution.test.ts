import { describe, expect, it } from 'vitest';
import type { UserRole } from '#shared/auth/principal.ts';
import { distribute, type DistributionGroup } from '#shared/groups/distribution.ts';
import type { SkipReason } from '#shared/groups/model.ts';
import type { Loads } from '#shared/groups/repository.ts';

/** A member as a row of the table: their settings in the group, their loads and their user. */
interface Row {
  id: string;
  /** Their own cap in the group. */
  cap?: number;
  skills?: string[];
  /** Minutes after the first member was added. */
  added?: number;
  /** Open tickets across all groups. */
  open?: number;
  /** Open tickets in this group, and the minute of their last assignment here. */
  inGroup?: number;
  last?: number;
  user?: { status: string; role: UserRole } | null;
}

const T0 = Date.parse('2026-01-05T09:00:00.000Z');
const iso = (minute: number) => new Date(T0 + minute * 60_000).toISOString();

function arrange(rows: Row[], group: Partial<DistributionGroup> = {}): { g: DistributionGroup; loads: Loads } {
  const g: DistributionGroup = { distributionMode: 'leastBusy', isActive: true, maxOpenTickets: null, maxOpenTicketsGlobal: null, members: {}, ...group };
  const loads: Loads = { agent: new Map(), inGroup: new Map(), users: new Map() };
  rows.forEach((r, n) => {
    g.members[r.id] = { maxOpenTickets: r.cap ?? null, skills: r.skills ?? [], addedAt: iso(r.added ?? n) };
    loads.agent.set(r.id, r.open ?? r.inGroup ?? 0);
    loads.inGroup.set(r.id, { openTickets: r.inGroup ?? 0, lastAssignedAt: r.last === undefined ? null : iso(r.last) });
    const user = r.user === undefined ? { status: 'active', role: 'member' as const } : r.user;
    if (user) loads.users.set(r.id, user);
  });
  return { g, loads };
}

interface Case {
  name: string;
  group?: Partial<DistributionGroup>;
  members: Row[];
  tags?: string[];
  status?: string;
  assignee: string | null;
  /** Why nobody gets the ticket. */
  reason?: string;
  /** Each member's skip reason (null: the chosen one); members not listed are not checked. */
  skipped?: Record<string, SkipReason | null>;
  /** The cap the chosen member's counter write is conditioned on. */
  cap?: number | null;
}

const cases: Case[] = [
  // manual
  { name: 'manual assigns nobody, whoever is free', group: { distributionMode: 'manual' }, members: [{ id: 'a' }], assignee: null, reason: 'the group distributes manually' },

  // roundRobin
  {
    name: 'roundRobin: the member whose last assignment in the group is oldest',
    group: { distributionMode: 'roundRobin' },
    members: [
      { id: 'a', last: 30, open: 0 },
      { id: 'b', last: 10, open: 9 },
      { id: 'c', last: 20, open: 0 },
    ],
    assignee: 'b',
    skipped: { a: 'notNextInTurn', b: null, c: 'notNextInTurn' },
  },
  {
    name: 'roundRobin: a member never assigned in the group goes first',
    group: { distributionMode: 'roundRobin' },
    members: [{ id: 'a', last: 10 }, { id: 'b' }],
    assignee: 'b',
  },
  {
    name: 'roundRobin: never assigned alike, the earliest added',
    group: { distributionMode: 'roundRobin' },
    members: [
      { id: 'a', added: 5 },
      { id: 'b', added: 1 },
    ],
    assignee: 'b',
  },
  {
    name: 'roundRobin: the member whose turn it is but at their cap is skipped for the next in turn',
    group: { distributionMode: 'roundRobin' },
    members: [
      { id: 'a', last: 10, cap: 2, inGroup: 2 },
      { id: 'b', last: 20 },
      { id: 'c', last: 30 },
    ],
    assignee: 'b',
    skipped: { a: 'atMemberCap', b: null, c: 'notNextInTurn' },
  },

  // leastBusy
  {
    name: 'leastBusy: the fewest open tickets across all groups',
    members: [
      { id: 'a', open: 3, inGroup: 0 },
      { id: 'b', open: 1, inGroup: 1 },
      { id: 'c', open: 2, inGroup: 0 },
    ],
    assignee: 'b',
  },
  {
    name: 'leastBusy: a tie goes to the member whose turn it is',
    members: [
      { id: 'a', open: 1, last: 20 },
      { id: 'b', open: 1, last: 10 },
      { id: 'c', open: 4 },
    ],
    assignee: 'b',
    skipped: { a: 'notNextInTurn', c: 'notNextInTurn' },
  },
  {
    name: 'leastBusy: a tie of never-assigned members goes to the earliest added',
    members: [
      { id: 'a', added: 3, open: 0 },
      { id: 'b', added: 2, open: 0 },
    ],
    assignee: 'b',
  },

  // skills
  {
    name: 'skills: the member with every tag that is a skill; other tags do not count',
    group: { distributionMode: 'skills' },
    tags: ['billing', 'vip', 'urgent'],
    members: [
      { id: 'a', skills: ['billing'], open: 0 },
      { id: 'b', skills: ['billing', 'vip'], open: 5 },
      { id: 'c', skills: ['vip'], open: 0 },
    ],
    assignee: 'b',
    skipped: { a: 'missingSkill', b: null, c: 'missingSkill' },
  },
  {
    name: 'skills: the least busy among those with the skills',
    group: { distributionMode: 'skills' },
    tags: ['billing'],
    members: [
      { id: 'a', skills: ['billing', 'de'], open: 4 },
      { id: 'b', skills: ['billing'], open: 2 },
      { id: 'c', skills: ['de'], open: 0 },
    ],
    assignee: 'b',
    skipped: { a: 'notNextInTurn', b: null, c: 'missingSkill' },
  },
  {
    name: 'skills: a ticket with no tag that is a skill goes to the least busy of all',
    group: { distributionMode: 'skills' },
    tags: ['hello'],
    members: [
      { id: 'a', skills: ['billing'], open: 1 },
      { id: 'b', open: 0 },
    ],
    assignee: 'b',
  },
  {
    name: 'skills: nobody has every skill the ticket needs',
    group: { distributionMode: 'skills' },
    tags: ['billing', 'vip'],
    members: [
      { id: 'a', skills: ['billing'] },
      { id: 'b', skills: ['vip'] },
    ],
    assignee: null,
    reason: 'no member can take the ticket',
  },
  {
    name: 'skills: a missing skill is the reason even at a cap',
    group: { distributionMode: 'skills', maxOpenTickets: 1 },
    tags: ['billing'],
    members: [
      { id: 'a', inGroup: 1 },
      { id: 'b', skills: ['billing'] },
    ],
    assignee: 'b',
    skipped: { a: 'missingSkill' },
  },

  // caps
  {
    name: 'per-member cap: a member at their own cap is skipped',
    members: [
      { id: 'a', cap: 2, inGroup: 2, open: 2 },
      { id: 'b', open: 5 },
    ],
    assignee: 'b',
    skipped: { a: 'atMemberCap' },
  },
  {
    name: 'per-member cap counts open tickets in this group only',
    members: [{ id: 'a', cap: 2, inGroup: 1, open: 9 }],
    assignee: 'a',
    cap: 2,
  },
  {
    name: "group maxOpenTickets: a member at the group's cap is skipped",
    group: { maxOpenTickets: 3 },
    members: [
      { id: 'a', inGroup: 3 },
      { id: 'b', inGroup: 2, open: 8 },
    ],
    assignee: 'b',
    skipped: { a: 'atGroupCap' },
    cap: 3,
  },
  {
    name: "the lower cap binds: a member's own cap under the group's",
    group: { maxOpenTickets: 5 },
    members: [{ id: 'a', cap: 2, inGroup: 2 }],
    assignee: null,
    reason: 'no member can take the ticket',
    skipped: { a: 'atMemberCap' },
  },
  {
    name: "the lower cap binds: the group's cap under a member's own",
    group: { maxOpenTickets: 2 },
    members: [{ id: 'a', cap: 5, inGroup: 2 }],
    assignee: null,
    skipped: { a: 'atGroupCap' },
  },
  {
    name: "a member's own cap equal to the group's is named as the member's",
    group: { maxOpenTickets: 2 },
    members: [{ id: 'a', cap: 2, inGroup: 2 }],
    assignee: null,
    skipped: { a: 'atMemberCap' },
  },
  {
    name: 'maxOpenTicketsGlobal: open tickets across groups count',
    group: { maxOpenTicketsGlobal: 4 },
    members: [
      { id: 'a', inGroup: 0, open: 4 },
      { id: 'b', inGroup: 1, open: 3 },
    ],
    assignee: 'b',
    skipped: { a: 'atGlobalCap' },
    cap: null,
  },
  {
    name: 'a group cap reached is named before the global cap',
    group: { maxOpenTickets: 1, maxOpenTicketsGlobal: 1 },
    members: [{ id: 'a', inGroup: 1, open: 1 }],
    assignee: null,
    skipped: { a: 'atGroupCap' },
  },

  // the group and its members
  { name: 'an inactive group distributes nothing', group: { isActive: false }, members: [{ id: 'a' }], assignee: null, reason: 'the group is inactive' },
  { name: 'a resolved ticket is not distributed', status: 'resolved', members: [{ id: 'a' }], assignee: null, reason: 'a resolved ticket is not distributed' },
  { name: 'a pending ticket is distributed', status: 'pending', members: [{ id: 'a' }], assignee: 'a' },
  {
    name: 'members who are not active agents are skipped',
    members: [
      { id: 'a', user: { status: 'suspended', role: 'member' } },
      { id: 'b', user: { status: 'active', role: 'viewer' } },
      { id: 'c', user: null },
      { id: 'd', open: 7 },
    ],
    assignee: 'd',
    skipped: { a: 'inactiveUser', b: 'inactiveUser', c: 'inactiveUser', d: null },
  },
  {
    name: 'no eligible member: nobody, and why',
    members: [
      { id: 'a', cap: 1, inGroup: 1 },
      { id: 'b', user: { status: 'invited', role: 'member' } },
    ],
    assignee: null,
    reason: 'no member can take the ticket',
  },
  { name: 'a group without members', members: [], assignee: null, reason: 'the group has no members' },
];

describe('distribute: who gets a ticket entering a group unassigned (decisions §9)', () => {
  it.each(cases)('$name', (c) => {
    // Arrange
    const { g, loads } = arrange(c.members, c.group);

    // Act
    const d = distribute(g, loads, { tags: c.tags ?? [], status: c.status ?? 'new' });

    // Assess
    expect(d.assignee?.userId ?? null).toBe(c.assignee);
    expect(d.reason).toEqual(c.assignee ? null : (c.reason ?? expect.any(String)));
    if (c.cap !== undefined) expect(d.assignee?.cap).toBe(c.cap);
    const reasons = Object.fromEntries(d.verdicts.map((v) => [v.userId, v.reason]));
    expect(reasons).toMatchObject(c.skipped ?? {});
    expect(d.verdicts.map((v) => v.userId)).toEqual(c.members.map((m) => m.id).sort((a, b) => Date.parse(g.members[a].addedAt) - Date.parse(g.members[b].addedAt) || a.localeCompare(b)));
  });

  it('weighs the members of a group that refuses, for the distribution test', () => {
    // Arrange
    const { g, loads } = arrange(
      [
        { id: 'a', open: 2 },
        { id: 'b', open: 1 },
        { id: 'c', cap: 1, inGroup: 1 },
      ],
      { distributionMode: 'manual' },
    );

    // Act
    const d = distribute(g, loads, { tags: [], status: 'new' });

    // Assess
    expect(d.assignee).toBeNull();
    expect(d.verdicts.map((v) => [v.userId, v.reason, v.openTickets, v.openTicketsInGroup, v.cap])).toEqual([
      ['a', 'notNextInTurn', 2, 0, null],
      ['b', null, 1, 0, null],
      ['c', 'atMemberCap', 1, 1, 1],
    ]);
  });
});
