import type { TxWrite } from '../db/transact.ts';
import { ValidationError, type FieldIssue } from '../domain/errors.ts';
import { backfillWrites } from './backfill.ts';
import { distribute, distributes, isLive, OPEN_STATUSES } from './distribution.ts';
import * as repo from './repository.ts';
import type { GroupRecord } from './repository.ts';

/** What the group side of a ticket change reads of the ticket, before and after. */
export interface TicketGroupView {
  id: string;
  groupId: string | null;
  assigneeId: string | null;
  status: string;
  tags: string[];
}

/** decisions §6/§9: a ticket's groupId must name a live group of the account. */
export async function checkGroup(accountId: string, groupId: string | null | undefined, issues: FieldIssue[]): Promise<GroupRecord | null> {
  if (!groupId) return null;
  const group = await repo.getGroup(accountId, groupId);
  if (!isLive(group)) issues.push({ field: 'groupId', message: 'no such group in this account' });
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
    if (!isLive(group)) throw new ValidationError('No such group', [{ field: 'groupId', message: 'no such group in this account' }]);
    if (distributes(group)) {
      const loads = await repo.loadsOf(accountId, group.id, Object.keys(group.members));
      const { assignee } = distribute(group, loads, after);
      if (assignee) {
        assigned = { ...assignee, at: new Date().toISOString() };
        after = { ...after, assigneeId: assignee.userId };
        writes.push(repo.userEligibleCheck(accountId, assignee.userId));
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
    if (groups.length) writes.push(...backfillWrites(accountId, groups, userId));
  }
  return { assigneeId: assigned?.userId, writes };
}
