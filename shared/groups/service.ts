import type { AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import { hasDeskRole, type Principal, type UserRole } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError, NotFoundError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { createAnswerWrites, isRetryableConflict, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import { backfillWrites } from './backfill.ts';
import { distribute, distributes, isLive } from './distribution.ts';
import { GROUP_DELETED, GROUP_EVENT_SOURCE } from './events.ts';
import { MAX_MEMBERS } from './limits.ts';
import type { AddMemberInput, CreateGroupInput, DistributionTestInput, Group, ListGroupsQuery, Member, UpdateGroupInput, UpdateMemberInput } from './model.ts';
import * as repo from './repository.ts';
import type { GroupRecord, GroupSummary, MemberConfig } from './repository.ts';

// The module's face for other modules and the handlers: the ticket side (assignment.ts), the background work (backfill.ts), the rules (distribution.ts).
export { checkGroup, ticketGroupChange, type TicketGroupView } from './assignment.ts';
export { backfillGroup, type AssignWaiting } from './backfill.ts';
export { OPEN_STATUSES } from './distribution.ts';
export type { GroupRecord } from './repository.ts';

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
  if (!isLive(g)) throw new NotFoundError('Group');
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

export async function createGroup(p: Principal, input: CreateGroupInput, opts: CreateAnswer<{ group: GroupRecord; defaultId: string }> = {}): Promise<{ group: GroupRecord; defaultId: string }> {
  return retryOnConflict(async () => {
    const defaultId = await repo.getDefaultGroupId(p.accountId);
    const now = new Date().toISOString();
    const g: GroupRecord = { id: newId('grp'), accountId: p.accountId, ...input, leadUserId: null, isActive: true, members: {}, createdAt: now, updatedAt: now, version: 1 };
    const audit = groupAudit(p, g.id, [...groupChanges(null, g), { field: 'isDefault', from: null, to: !defaultId }], { at: now });
    const created = { group: g, defaultId: defaultId ?? g.id };
    // A commit whose answer is lost must not let the client's retry with its key create the group again
    // (docs/decisions.md "Ambiguous writes"): the key holds the answer from the same transaction.
    await transactWrite([...repo.createGroupWrites(g, !defaultId), audit, ...createAnswerWrites(opts, created)]);
    return created;
  }, isRetryableConflict);
}

/** What a change of a group writes: the group as it becomes (null: nothing), and what commits with it. */
interface GroupChange {
  next: GroupRecord | null;
  backfill?: boolean;
  /** Writes of the same transaction, given the group as stored (the request's answer). */
  related?: (stamped: GroupRecord) => TxWrite[];
}

/**
 * Read-modify-write of a group under optimistic locking; `change` returns the
 * next record (or null for no change) and whether capacity may have grown.
 */

async function changeGroup(p: Principal, groupId: string, change: (g: GroupRecord) => GroupChange | Promise<GroupChange>) {
  return retryOnConflict(async () => {
    const current = await requireGroup(p.accountId, groupId);
    const { next, backfill, related } = await change(current);
    if (!next) return current;
    const stamped: GroupRecord = { ...next, updatedAt: new Date().toISOString(), version: current.version + 1 };
    // The same values given again still write (as ever) but record no audit: nothing changed.
    const changes = groupChanges(current, stamped);
    await transactWrite([
      repo.replaceGroupWrite(stamped, current.version),
      ...(backfill && distributes(stamped) ? backfillWrites(p.accountId, [groupId]) : []),
      ...(changes.length ? [groupAudit(p, groupId, changes, { at: stamped.updatedAt })] : []),
      ...(related?.(stamped) ?? []),
    ]);
    return stamped;
  }, isRetryableConflict);
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

export async function addMember(p: Principal, groupId: string, input: AddMemberInput, opts: CreateAnswer<Member> = {}): Promise<Member> {
  const g = await changeGroup(p, groupId, async (g) => {
    if (g.members[input.userId]) throw new ConflictError('The user is already a member of the group');
    const issue = fitIssue('userId', (await repo.usersOf(p.accountId, [input.userId])).get(input.userId));
    if (issue) throw new ValidationError(`Invalid member: ${issue.message}`, [issue]);
    checkRoom(g, 1);
    const member: MemberConfig = { maxOpenTickets: input.maxOpenTickets ?? null, skills: input.skills ?? [], addedAt: new Date().toISOString() };
    // Its answer commits with it (docs/decisions.md "Ambiguous writes"): a retry with the key after a lost answer is
    // not a 409 for the member it added.
    const related = (stamped: GroupRecord) => createAnswerWrites(opts, toMemberDto(groupId, input.userId, stamped.members[input.userId]));
    return { next: { ...g, members: { ...g.members, [input.userId]: member } }, backfill: true, related };
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

export interface BulkAdded {
  added: Member[];
  alreadyMembers: string[];
}

/** Add 1..100 members in one write: every user must fit, or none is added; existing members stay as they are. */
export async function bulkAddMembers(p: Principal, groupId: string, userIds: string[], opts: CreateAnswer<BulkAdded> = {}): Promise<BulkAdded> {
  let added: string[] = [];
  let already: string[] = [];
  const bulkAdded = (stored: GroupRecord): BulkAdded => ({ added: added.map((u) => toMemberDto(groupId, u, stored.members[u])), alreadyMembers: already });
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
    // Its answer commits with it, as addMember's: a retry with the key answers what this request added.
    return { next: { ...g, members }, backfill: true, related: (stamped) => createAnswerWrites(opts, bulkAdded(stamped)) };
  });
  return bulkAdded(g);
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

/** Explain, without writing, who would get a ticket with these attributes and why every other member would not. */
export async function testDistribution(p: Principal, groupId: string, input: DistributionTestInput) {
  const g = await requireGroup(p.accountId, groupId);
  const loads = await repo.loadsOf(p.accountId, g.id, Object.keys(g.members));
  const { assignee, reason, verdicts } = distribute(g, loads, input.ticket);
  const assigneeId = assignee?.userId ?? null;
  return {
    groupId: g.id,
    distributionMode: g.distributionMode,
    assigneeId,
    reason,
    members: verdicts.map(({ addedAt: _a, ...v }) => ({ ...v, selected: v.userId === assigneeId, reason: v.userId === assigneeId ? null : v.reason })),
  };
}
