import type { AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import { hasDeskRole, type Principal, type UserRole } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError, NotFoundError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { GROUP_CAPACITY_CHANGED, GROUP_DELETED, GROUP_EVENT_SOURCE } from './events.ts';
import {
  MAX_MEMBERS,
  type AddMemberInput,
  type CreateGroupInput,
  type DistributionTestInput,
  type Group,
  type ListGroupsQuery,
  type Member,
  type SkipReason,
  type UpdateGroupInput,
  type UpdateMemberInput,
} from './model.ts';
import * as repo from './repository.ts';
import type { GroupRecord, GroupSummary, Loads, MemberConfig } from './repository.ts';

export type { GroupRecord } from './repository.ts';

/** decisions §9: an agent's open tickets are those assigned to them in these statuses. */
export const OPEN_STATUSES: readonly string[] = ['new', 'open', 'pending'];

const live = (g: GroupRecord | null): g is GroupRecord => Boolean(g && !g.deletingAt);

export function toGroupDto(g: GroupRecord | GroupSummary, defaultId: string | null): Group {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    isPrivate: g.isPrivate,
    distributionMode: g.distributionMode,
    leadUserId: g.leadUserId,
    maxOpenTickets: g.maxOpenTickets,
    maxOpenTicketsGlobal: g.maxOpenTicketsGlobal,
    isActive: g.isActive,
    isDefault: g.id === defaultId,
    memberCount: 'members' in g ? Object.keys(g.members).length : g.memberCount,
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
  };
}

export const toMemberDto = (groupId: string, userId: string, m: MemberConfig): Member => ({ userId, groupId, maxOpenTickets: m.maxOpenTickets, skills: m.skills, addedAt: m.addedAt });

export const membersOf = (g: GroupRecord): Member[] =>
  Object.entries(g.members)
    .map(([userId, m]) => toMemberDto(g.id, userId, m))
    .sort((a, b) => a.addedAt.localeCompare(b.addedAt) || a.userId.localeCompare(b.userId));

async function requireGroup(accountId: string, groupId: string): Promise<GroupRecord> {
  const g = await repo.getGroup(accountId, groupId);
  if (!live(g)) throw new NotFoundError('Group');
  return g;
}

/** A group and whether it is the default, for rendering. */
export async function getGroup(p: Principal, groupId: string): Promise<{ group: GroupRecord; defaultId: string | null }> {
  const [group, defaultId] = await Promise.all([requireGroup(p.accountId, groupId), repo.getDefaultGroupId(p.accountId)]);
  return { group, defaultId };
}

/** The account's default group id, for rendering isDefault. */
export const defaultGroupId = (accountId: string) => repo.getDefaultGroupId(accountId);

export async function listGroups(p: Principal, q: ListGroupsQuery): Promise<{ items: Partial<Group>[]; total: number }> {
  const [all, defaultId] = await Promise.all([repo.listGroupSummaries(p.accountId), repo.getDefaultGroupId(p.accountId)]);
  const matches = all.filter((g) => !g.deletingAt && (q.isActive === undefined || g.isActive === q.isActive) && (q.isPrivate === undefined || g.isPrivate === q.isPrivate));
  const page = matches.slice((q.page - 1) * q.limit, q.page * q.limit).map((g) => toGroupDto(g, defaultId));
  const fields = q.fields?.length ? new Set<string>(['id', ...q.fields]) : null;
  return { items: fields ? page.map((g) => Object.fromEntries(Object.entries(g).filter(([k]) => fields.has(k)))) : page, total: matches.length };
}

/** The write that asks the distribution consumer to backfill groups (capacity freed, a group distributing again). */
const backfillEvent = (accountId: string, groupIds: string[], userId?: string) =>
  outboxWrites([newDomainEvent(accountId, GROUP_CAPACITY_CHANGED, { groupIds, ...(userId ? { userId } : {}) })], GROUP_EVENT_SOURCE);

const distributes = (g: GroupRecord) => g.isActive && g.distributionMode !== 'manual' && !g.deletingAt;

/** What a group's audit lists (decisions §15), besides `isDefault` and one `members.<userId>` per member added, changed or removed. */
const AUDITED = ['name', 'description', 'isPrivate', 'distributionMode', 'leadUserId', 'maxOpenTickets', 'maxOpenTicketsGlobal', 'isActive'] as const;

/** A member as the group's audit shows it: its settings in the group; null when not a member. */
const memberView = (m: MemberConfig | undefined) => (m ? { maxOpenTickets: m.maxOpenTickets, skills: m.skills } : null);

/** The audited changes from `before` (null: a create) to `after`: the group's fields, then each member that changed. */
function groupChanges(before: GroupRecord | null, after: GroupRecord): AuditChange[] {
  const changes = diffFields(before, after, AUDITED);
  for (const userId of new Set([...Object.keys(before?.members ?? {}), ...Object.keys(after.members)])) {
    const field = `members.${userId}`;
    changes.push(...diffFields({ [field]: memberView(before?.members[userId]) }, { [field]: memberView(after.members[userId]) }, [field]));
  }
  return changes;
}

const groupAudit = (p: Principal, groupId: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}): TxWrite =>
  auditWrite({ accountId: p.accountId, resource: { type: 'group', id: groupId }, actor: userActor(p), via: 'api', changes, ...opts });

/** The default moving between groups: an audit of each group whose `isDefault` changed. */
const defaultMoveAudits = (p: Principal, from: string | null, to: string | null, at: string): TxWrite[] => [
  ...(from ? [groupAudit(p, from, [{ field: 'isDefault', from: true, to: false }], { at })] : []),
  ...(to ? [groupAudit(p, to, [{ field: 'isDefault', from: false, to: true }], { at })] : []),
];

export async function createGroup(p: Principal, input: CreateGroupInput): Promise<{ group: GroupRecord; defaultId: string | null }> {
  return retryOnConflict(async () => {
    const defaultId = await repo.getDefaultGroupId(p.accountId);
    const now = new Date().toISOString();
    const g: GroupRecord = { id: newId('grp'), accountId: p.accountId, ...input, leadUserId: null, isActive: true, members: {}, createdAt: now, updatedAt: now, version: 1 };
    const audit = groupAudit(p, g.id, [...groupChanges(null, g), { field: 'isDefault', from: null, to: !defaultId }], { at: now });
    await transactWrite([...repo.createGroupWrites(g, !defaultId), audit]);
    return { group: g, defaultId: defaultId ?? g.id };
  });
}

/**
 * Read-modify-write of a group under optimistic locking; `change` returns the
 * next record (or null for no change) and whether capacity may have grown.
 */
async function changeGroup(p: Principal, groupId: string, change: (g: GroupRecord) => { next: GroupRecord | null; backfill?: boolean } | Promise<{ next: GroupRecord | null; backfill?: boolean }>) {
  return retryOnConflict(async () => {
    const current = await requireGroup(p.accountId, groupId);
    const { next, backfill } = await change(current);
    if (!next) return current;
    const stamped: GroupRecord = { ...next, updatedAt: new Date().toISOString(), version: current.version + 1 };
    // The same values given again still write (as ever) but record no audit: nothing changed.
    const changes = groupChanges(current, stamped);
    await transactWrite([
      repo.replaceGroupWrite(stamped, current.version),
      ...(backfill && distributes(stamped) ? backfillEvent(p.accountId, [groupId]) : []),
      ...(changes.length ? [groupAudit(p, groupId, changes, { at: stamped.updatedAt })] : []),
    ]);
    return stamped;
  });
}

/** Raising or clearing a cap can free capacity. */
const capGrew = (before: number | null, after: number | null | undefined) => after !== undefined && before !== null && (after === null || after > before);

export async function updateGroup(p: Principal, groupId: string, input: UpdateGroupInput): Promise<GroupRecord> {
  return changeGroup(p, groupId, (g) => {
    const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as UpdateGroupInput;
    if (!Object.keys(defined).length) return { next: null };
    const backfill =
      capGrew(g.maxOpenTickets, defined.maxOpenTickets) ||
      capGrew(g.maxOpenTicketsGlobal, defined.maxOpenTicketsGlobal) ||
      (defined.distributionMode !== undefined && defined.distributionMode !== g.distributionMode);
    return { next: { ...g, ...defined }, backfill };
  });
}

export const setActive = (p: Principal, groupId: string, isActive: boolean) => changeGroup(p, groupId, (g) => ({ next: g.isActive === isActive ? null : { ...g, isActive }, backfill: isActive }));

export async function setLead(p: Principal, groupId: string, userId: string | null): Promise<GroupRecord> {
  return changeGroup(p, groupId, (g) => {
    if (userId !== null && !g.members[userId]) throw new ValidationError('The lead must be a member of the group', [{ field: 'userId', message: 'must be a member of the group' }]);
    return { next: g.leadUserId === userId ? null : { ...g, leadUserId: userId } };
  });
}

/** Make a group the workspace default: the one guard item moves in one transaction, so exactly one group is default. */
export async function makeDefault(p: Principal, groupId: string): Promise<GroupRecord> {
  return retryOnConflict(async () => {
    const [g, from] = await Promise.all([requireGroup(p.accountId, groupId), repo.getDefaultGroupId(p.accountId)]);
    if (from !== g.id) await transactWrite([...repo.setDefaultWrites(p.accountId, from, g), ...defaultMoveAudits(p, from, g.id, new Date().toISOString())]);
    return g;
  });
}

const fitIssue = (field: string, user: { status: string; role: UserRole } | undefined): FieldIssue | null =>
  !user
    ? { field, message: 'no such user in this account' }
    : user.status !== 'active' || !hasDeskRole(user.role, 'agent')
      ? { field, message: 'must be an active user with agent role or above' }
      : null;

function checkRoom(g: GroupRecord, adding: number) {
  if (Object.keys(g.members).length + adding > MAX_MEMBERS)
    throw new ValidationError(`A group has at most ${MAX_MEMBERS} members`, [{ field: 'userIds', message: `at most ${MAX_MEMBERS} members per group` }]);
}

export async function addMember(p: Principal, groupId: string, input: AddMemberInput): Promise<Member> {
  const g = await changeGroup(p, groupId, async (g) => {
    if (g.members[input.userId]) throw new ConflictError('The user is already a member of the group');
    const issue = fitIssue('userId', (await repo.usersOf(p.accountId, [input.userId])).get(input.userId));
    if (issue) throw new ValidationError(`Invalid member: ${issue.message}`, [issue]);
    checkRoom(g, 1);
    const member: MemberConfig = { maxOpenTickets: input.maxOpenTickets ?? null, skills: input.skills ?? [], addedAt: new Date().toISOString() };
    return { next: { ...g, members: { ...g.members, [input.userId]: member } }, backfill: true };
  });
  return toMemberDto(groupId, input.userId, g.members[input.userId]);
}

export async function updateMember(p: Principal, groupId: string, userId: string, input: UpdateMemberInput): Promise<Member> {
  const g = await changeGroup(p, groupId, (g) => {
    const m = g.members[userId];
    if (!m) throw new NotFoundError('Member');
    const next: MemberConfig = { ...m, ...(input.maxOpenTickets !== undefined ? { maxOpenTickets: input.maxOpenTickets } : {}), ...(input.skills !== undefined ? { skills: input.skills } : {}) };
    if (JSON.stringify(next) === JSON.stringify(m)) return { next: null };
    // A raised cap or new skills can make the member fit waiting tickets.
    return { next: { ...g, members: { ...g.members, [userId]: next } }, backfill: true };
  });
  return toMemberDto(groupId, userId, g.members[userId]);
}

export async function removeMember(p: Principal, groupId: string, userId: string): Promise<void> {
  await changeGroup(p, groupId, (g) => {
    if (!g.members[userId]) throw new NotFoundError('Member');
    const { [userId]: _gone, ...members } = g.members;
    return { next: { ...g, members, leadUserId: g.leadUserId === userId ? null : g.leadUserId } };
  });
}

/** Add 1..100 members in one write: every user must fit, or none is added; existing members stay as they are. */
export async function bulkAddMembers(p: Principal, groupId: string, userIds: string[]): Promise<{ added: Member[]; alreadyMembers: string[] }> {
  let added: string[] = [];
  let already: string[] = [];
  const g = await changeGroup(p, groupId, async (g) => {
    already = userIds.filter((u) => g.members[u]);
    added = userIds.filter((u) => !g.members[u]);
    const users = await repo.usersOf(p.accountId, added);
    const issues = userIds.map((u, i) => (g.members[u] ? null : fitIssue(`userIds.${i}`, users.get(u)))).filter((i): i is FieldIssue => i !== null);
    if (issues.length) throw new ValidationError(`Invalid members: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);
    if (!added.length) return { next: null };
    checkRoom(g, added.length);
    const at = new Date().toISOString();
    const members = { ...g.members };
    for (const u of added) members[u] = { maxOpenTickets: null, skills: [], addedAt: at };
    return { next: { ...g, members }, backfill: true };
  });
  return { added: added.map((u) => toMemberDto(groupId, u, g.members[u])), alreadyMembers: already };
}

export async function bulkRemoveMembers(p: Principal, groupId: string, userIds: string[]): Promise<{ removed: string[]; notMembers: string[] }> {
  let removed: string[] = [];
  let notMembers: string[] = [];
  await changeGroup(p, groupId, (g) => {
    removed = userIds.filter((u) => g.members[u]);
    notMembers = userIds.filter((u) => !g.members[u]);
    if (!removed.length) return { next: null };
    const members = Object.fromEntries(Object.entries(g.members).filter(([u]) => !removed.includes(u)));
    return { next: { ...g, members, leadUserId: g.leadUserId && removed.includes(g.leadUserId) ? null : g.leadUserId } };
  });
  return { removed, notMembers };
}

export async function listMembers(p: Principal, groupId: string): Promise<Member[]> {
  return membersOf(await requireGroup(p.accountId, groupId));
}

/** Tickets the request itself detaches before handing the rest of a deletion to the background consumer. */
const INLINE_DETACH = 25;

/**
 * Delete a group (docs/decisions.md "Groups"): the group disappears at once
 * (404), its members go with it, and its tickets are detached (groupId null,
 * assignee kept) here or, past a bounded number, by the consumer of
 * group.deleted. Deleting the default passes the default to the oldest
 * remaining group (none when it was the last), in the same transaction.
 */
export async function deleteGroup(p: Principal, groupId: string, detach: DetachTicket): Promise<void> {
  await retryOnConflict(async () => {
    const [g, defaultId] = await Promise.all([requireGroup(p.accountId, groupId), repo.getDefaultGroupId(p.accountId)]);
    let handoff: { to: GroupRecord | null } | undefined;
    if (defaultId === g.id) {
      // Ids are time-ordered, so the first live one listed is the oldest; its read proves it live in the transaction.
      const next = (await repo.listGroupSummaries(p.accountId)).find((o) => o.id !== g.id && !o.deletingAt);
      const to = next ? await repo.getGroup(p.accountId, next.id) : null;
      if (next && (!to || to.deletingAt)) throw new repo.StaleGroupError('The next default group went away meanwhile');
      handoff = { to };
    }
    const at = new Date().toISOString();
    // The group's audit, and the next default's when the default passes to it.
    const audits = [groupAudit(p, groupId, [], { deleted: true, at }), ...defaultMoveAudits(p, null, handoff?.to?.id ?? null, at)];
    await repo.markGroupDeleting(g, at, [...outboxWrites([newDomainEvent(p.accountId, GROUP_DELETED, { groupId }, at)], GROUP_EVENT_SOURCE), ...audits], handoff);
  });
  await finishGroupDeletion(p.accountId, groupId, detach, INLINE_DETACH);
}

/** Detach one ticket from a group (the tickets service does it, with its ticket.updated event). */
export type DetachTicket = (accountId: string, ticketId: string, groupId: string) => Promise<void>;

/**
 * Finish a marked deletion: detach tickets (at most `budget`), then drop the
 * group's counters and its item. Returns false when the budget ran out.
 * Idempotent: a redelivered group.deleted resumes where the last run stopped.
 */
export async function finishGroupDeletion(accountId: string, groupId: string, detach: DetachTicket, budget = Infinity): Promise<boolean> {
  const g = await repo.getGroup(accountId, groupId);
  if (!g) return true;
  if (!g.deletingAt) return true;
  for (;;) {
    const ids = await repo.groupTicketIds(accountId, groupId, 25);
    if (!ids.length) break;
    for (const id of ids) {
      if (budget-- <= 0) return false;
      await detach(accountId, id, groupId);
      await repo.dropTicketIndex(accountId, groupId, id);
    }
  }
  await repo.deleteGroupLoads(accountId, groupId);
  await repo.removeDeletedGroup(accountId, groupId);
  return true;
}

// ---------------------------------------------------------------- distribution

export interface TicketGroupView {
  id: string;
  groupId: string | null;
  assigneeId: string | null;
  status: string;
  tags: string[];
}

interface Verdict {
  userId: string;
  reason: SkipReason | null;
  openTickets: number;
  openTicketsInGroup: number;
  cap: number | null;
  lastAssignedAt: string | null;
  addedAt: string;
}

/**
 * The cap in this group that binds a member (decisions §9: their own and the
 * group's both apply, so the lower one; a tie names the member's).
 */
const capOf = (g: GroupRecord, m: MemberConfig): { cap: number | null; kind: 'atMemberCap' | 'atGroupCap' } =>
  m.maxOpenTickets !== null && (g.maxOpenTickets === null || m.maxOpenTickets <= g.maxOpenTickets) ? { cap: m.maxOpenTickets, kind: 'atMemberCap' } : { cap: g.maxOpenTickets, kind: 'atGroupCap' };

/**
 * Who would get a ticket (decisions §9): members who cannot take it are
 * skipped with their reason; among the rest, roundRobin takes the one whose
 * last assignment in the group is oldest, leastBusy and skills the one with
 * fewest open tickets (oldest turn breaks ties).
 */
function choose(g: GroupRecord, loads: Loads, tags: string[]): { chosen: Verdict | null; verdicts: Verdict[] } {
  const skillSet = new Set(Object.values(g.members).flatMap((m) => m.skills));
  const needed = g.distributionMode === 'skills' ? tags.filter((t) => skillSet.has(t)) : [];
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
  const turn = (a: Verdict, b: Verdict) => (a.lastAssignedAt ?? '').localeCompare(b.lastAssignedAt ?? '') || a.addedAt.localeCompare(b.addedAt) || a.userId.localeCompare(b.userId);
  const order = g.distributionMode === 'roundRobin' ? turn : (a: Verdict, b: Verdict) => a.openTickets - b.openTickets || turn(a, b);
  const eligible = verdicts.filter((v) => v.reason === null).sort(order);
  const chosen = eligible[0] ?? null;
  for (const v of eligible.slice(1)) v.reason = 'notNextInTurn';
  return { chosen, verdicts };
}

/** Explain, without writing, who would get a ticket with these attributes and why every other member would not. */
export async function testDistribution(p: Principal, groupId: string, input: DistributionTestInput) {
  const g = await requireGroup(p.accountId, groupId);
  const loads = await repo.loadsOf(p.accountId, g.id, Object.keys(g.members));
  const { chosen, verdicts } = choose(g, loads, input.ticket.tags);
  const groupReason = !g.isActive
    ? 'the group is inactive'
    : g.distributionMode === 'manual'
      ? 'the group distributes manually'
      : !OPEN_STATUSES.includes(input.ticket.status)
        ? `a ${input.ticket.status} ticket is not distributed`
        : null;
  const assigneeId = groupReason ? null : (chosen?.userId ?? null);
  return {
    groupId: g.id,
    distributionMode: g.distributionMode,
    assigneeId,
    reason: groupReason ?? (assigneeId ? null : Object.keys(g.members).length ? 'no member can take the ticket' : 'the group has no members'),
    members: verdicts
      .sort((a, b) => a.addedAt.localeCompare(b.addedAt) || a.userId.localeCompare(b.userId))
      .map(({ addedAt: _a, ...v }) => ({ ...v, selected: v.userId === assigneeId, reason: v.userId === assigneeId ? null : v.reason })),
  };
}

/** decisions §6/§9: a ticket's groupId must name a live group of the account. */
export async function checkGroup(accountId: string, groupId: string | null | undefined, issues: FieldIssue[]): Promise<GroupRecord | null> {
  if (!groupId) return null;
  const group = await repo.getGroup(accountId, groupId);
  if (!live(group)) issues.push({ field: 'groupId', message: 'no such group in this account' });
  return group;
}

const isOpen = (t: TicketGroupView | null) => Boolean(t?.assigneeId && OPEN_STATUSES.includes(t.status));
const isWaiting = (t: TicketGroupView | null) => Boolean(t?.groupId && !t.assigneeId && OPEN_STATUSES.includes(t.status));

/**
 * The group side of a ticket change, for the ticket's own transaction:
 * automatic assignment when the ticket enters a group unassigned (or on
 * backfill), the open-ticket counters (per agent, per agent in the group) with
 * cap conditions for automatic assignments only, the group's ticket and
 * waiting-ticket index items, and a backfill request when capacity frees.
 * `assigneeId` is set when distribution picked an agent: the caller applies it
 * to the ticket before computing its events.
 */
export async function ticketGroupChange(
  accountId: string,
  before: TicketGroupView | null,
  after: TicketGroupView | null,
  /** `group`: the ticket's group as the caller already read it (checkGroup), so it is not read twice. */
  opts: { backfill?: boolean; group?: GroupRecord | null } = {},
): Promise<{ assigneeId?: string; writes: TxWrite[] }> {
  const writes: TxWrite[] = [];
  const joins = Boolean(after?.groupId && after.groupId !== before?.groupId);
  let group: GroupRecord | null = null;
  let assigned: { userId: string; cap: number | null; at: string } | undefined;
  if (after && isWaiting(after) && (joins || opts.backfill)) {
    group = opts.group?.id === after.groupId ? opts.group : await repo.getGroup(accountId, after.groupId!);
    if (!live(group)) throw new ValidationError('No such group', [{ field: 'groupId', message: 'no such group in this account' }]);
    if (distributes(group)) {
      const loads = await repo.loadsOf(accountId, group.id, Object.keys(group.members));
      const { chosen } = choose(group, loads, after.tags);
      if (chosen) {
        assigned = { userId: chosen.userId, cap: chosen.cap, at: new Date().toISOString() };
        after = { ...after, assigneeId: chosen.userId };
        writes.push(repo.userEligibleCheck(accountId, chosen.userId));
      }
    }
  }
  // Joining a group proves it is live; a distribution also proves its config and members are what was read.
  if (group && (joins || assigned)) writes.push(repo.groupLiveCheck(group, Boolean(assigned)));
  else if (joins) writes.push(repo.groupLiveCheck({ accountId, id: after!.groupId!, version: 0 }));

  const agentDelta = new Map<string, number>();
  const groupDelta = new Map<string, { groupId: string; userId: string; d: number }>();
  const count = (t: TicketGroupView | null, d: number) => {
    if (!t || !isOpen(t)) return;
    agentDelta.set(t.assigneeId!, (agentDelta.get(t.assigneeId!) ?? 0) + d);
    if (t.groupId) {
      const k = `${t.groupId}#${t.assigneeId}`;
      groupDelta.set(k, { groupId: t.groupId, userId: t.assigneeId!, d: (groupDelta.get(k)?.d ?? 0) + d });
    }
  };
  count(before, -1);
  count(after, 1);
  const byDistribution = (userId: string) => assigned?.userId === userId;
  const freed: string[] = [];
  for (const [userId, d] of agentDelta) {
    if (d === 0) continue;
    writes.push(repo.agentLoadWrite(accountId, userId, d, byDistribution(userId) ? group!.maxOpenTicketsGlobal : undefined));
    if (d < 0) freed.push(userId);
  }
  for (const { groupId, userId, d } of groupDelta.values()) {
    if (d === 0) continue;
    const auto = byDistribution(userId) && groupId === group?.id;
    writes.push(repo.groupLoadWrite(accountId, groupId, userId, d, auto ? { at: assigned!.at, cap: assigned!.cap } : undefined));
  }

  const ticketId = (after ?? before)!.id;
  if (before?.groupId !== after?.groupId) {
    if (before?.groupId) writes.push(repo.groupTicketWrite(accountId, before.groupId, ticketId, false));
    if (after?.groupId) writes.push(repo.groupTicketWrite(accountId, after.groupId, ticketId, true));
  }
  const waitBefore = isWaiting(before) ? before!.groupId : null;
  const waitAfter = isWaiting(after) ? after!.groupId : null;
  if (waitBefore !== waitAfter) {
    if (waitBefore) writes.push(repo.groupWaitingWrite(accountId, waitBefore, ticketId, false));
    if (waitAfter) writes.push(repo.groupWaitingWrite(accountId, waitAfter, ticketId, true));
  }

  // Capacity freed for these agents: backfill every distributing group they belong to.
  for (const userId of freed) {
    const groups = await repo.distributingGroupsOf(accountId, userId);
    if (groups.length) writes.push(...backfillEvent(accountId, groups, userId));
  }
  return { assigneeId: assigned?.userId, writes };
}

/** Assign one waiting ticket (the tickets service does it through its update plan); 'none' when nobody can take it. */
export type AssignWaiting = (accountId: string, ticketId: string) => Promise<'assigned' | 'none' | 'gone'>;

/** Assignments one backfill run makes before it hands the rest to a follow-up event (bounded work per message). */
const BACKFILL_BATCH = 50;

/**
 * Backfill a group: assign its oldest waiting tickets while members have
 * capacity. Every assignment is a conditional transaction, so concurrent runs
 * and redelivered requests never put an agent over a cap or assign a ticket twice.
 */
export async function backfillGroup(accountId: string, groupId: string, assign: AssignWaiting): Promise<number> {
  const g = await repo.getGroup(accountId, groupId);
  if (!live(g) || !distributes(g)) return 0;
  let assignedCount = 0;
  let after: string | undefined;
  for (;;) {
    const ids = await repo.waitingTicketIds(accountId, groupId, 25, after);
    if (!ids.length) return assignedCount;
    for (const id of ids) {
      const r = await assign(accountId, id);
      if (r === 'assigned') assignedCount++;
      // Nobody can take this ticket; in modes other than skills nobody can take any other either.
      if (r === 'none' && g.distributionMode !== 'skills') return assignedCount;
      if (assignedCount >= BACKFILL_BATCH) {
        await transactWrite(backfillEvent(accountId, [groupId]));
        return assignedCount;
      }
    }
    after = ids[ids.length - 1];
  }
}
