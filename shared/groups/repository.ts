import type { UserRole } from '../auth/principal.ts';
import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { groupEntities } from '../db/entities/groups.ts';
import { batchDelete, batchGet, queryAll, queryPage, type Key } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';
import { deskAgentCheck, userFromItem, userKey } from '../users/api.ts';
import type { DistributionMode } from './model.ts';

/** A member's settings, kept in the group item's member map. */
export interface MemberConfig {
  maxOpenTickets: number | null;
  skills: string[];
  addedAt: string;
}

/** A group as stored: config, members, and `deletingAt` while its deletion is being finished. */
export interface GroupRecord {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  isPrivate: boolean;
  distributionMode: DistributionMode;
  leadUserId: string | null;
  maxOpenTickets: number | null;
  maxOpenTicketsGlobal: number | null;
  isActive: boolean;
  members: Record<string, MemberConfig>;
  createdAt: string;
  updatedAt: string;
  version: number;
  deletingAt?: string;
}

export type GroupSummary = Omit<GroupRecord, 'members'> & { memberCount: number };

/** The group changed since it was read (config, members, deletion); the service re-reads and re-applies. */
export class StaleGroupError extends ConflictError {}
/** A counter or user a distribution relied on changed; the distribution is planned again. */
export class DistributionRaceError extends ConflictError {}

const GROUP_FIELDS = [
  'id',
  'accountId',
  'name',
  'description',
  'isPrivate',
  'distributionMode',
  'leadUserId',
  'maxOpenTickets',
  'maxOpenTicketsGlobal',
  'isActive',
  'members',
  'createdAt',
  'updatedAt',
  'version',
  'deletingAt',
] as const satisfies readonly (keyof GroupRecord)[];

const groups = bindEntity<GroupRecord>(groupEntities.group, {
  fields: GROUP_FIELDS,
  extra: (g) => ({ memberCount: Object.keys(g.members).length }),
  normalize: ({ deletingAt, members, ...g }) => ({ ...g, members: members ?? {}, ...(deletingAt ? { deletingAt } : {}) }),
});
const defaultGuards = bindEntity<{ accountId: string; groupId: string }>(groupEntities.defaultGroup, { fields: ['groupId'] });

interface LoadRecord {
  accountId: string;
  userId: string;
  openTickets: number;
}
const agentLoads = bindEntity<LoadRecord>(groupEntities.agentLoad, { fields: ['userId', 'openTickets'] });
const groupLoads = bindEntity<LoadRecord & { groupId: string; lastAssignedAt: string | null }>(groupEntities.groupLoad, { fields: ['groupId', 'userId', 'openTickets', 'lastAssignedAt'] });

interface GroupTicketRecord {
  accountId: string;
  groupId: string;
  ticketId: string;
}
const groupTickets = bindEntity<GroupTicketRecord>(groupEntities.groupTicket, { fields: ['groupId', 'ticketId'] });
const waitingTickets = bindEntity<GroupTicketRecord>(groupEntities.groupWaiting, { fields: ['groupId', 'ticketId'] });

/** Attributes of a group without its member map, with its count instead (lists). */
const SUMMARY = [...GROUP_FIELDS.filter((f) => f !== 'members'), 'memberCount'];

/** Get a group (consistent: distribution decisions and member changes start from it). */
export async function getGroup(accountId: string, groupId: string): Promise<GroupRecord | null> {
  return groups.get({ accountId, id: groupId }, { consistent: true });
}

/** The account's group items (groups per account are few; one Query on the prefix), reading only `projection`. */
const queryGroups = (accountId: string, projection: string, names: Record<string, string>) => {
  const q = groups.query('byAccount', { accountId });
  return queryAll<Record<string, unknown>>({ ...q, names: { ...q.names, ...names }, projection });
};

/** Every group of an account without member maps. */
export async function listGroupSummaries(accountId: string): Promise<GroupSummary[]> {
  const items = await queryGroups(accountId, SUMMARY.map((a) => `#${a}`).join(', '), Object.fromEntries(SUMMARY.map((a) => [`#${a}`, a])));
  return items.map((i) => {
    const { members: _m, ...rest } = groups.fromItem(i);
    return { ...rest, memberCount: Number(i.memberCount ?? 0) };
  });
}

/** Ids of the active, distributing groups a user is a member of (one Query projecting only that member's entry). */
export async function distributingGroupsOf(accountId: string, userId: string): Promise<string[]> {
  const items = await queryGroups(accountId, 'id, isActive, distributionMode, deletingAt, members.#u', { '#u': userId });
  return items.filter((i) => (i.members as Record<string, unknown> | undefined)?.[userId] && i.isActive && i.distributionMode !== 'manual' && !i.deletingAt).map((i) => String(i.id));
}

export async function getDefaultGroupId(accountId: string): Promise<string | null> {
  return (await defaultGuards.get({ accountId }, { consistent: true }))?.groupId ?? null;
}

/** Create a group; as the account's first group it also claims the default guard (a concurrent first group makes this retry). */
export function createGroupWrites(g: GroupRecord, claimDefault: boolean): TxWrite[] {
  const writes: TxWrite[] = [groups.put(g, conditions.absent())];
  if (claimDefault)
    writes.push(
      defaultGuards.put(
        { accountId: g.accountId, groupId: g.id },
        conditions.absent(() => new StaleGroupError('Another group became the default concurrently')),
      ),
    );
  return writes;
}

/** The group still has the version that was read and is not being deleted. */
const unchangedSince = (version: number, error: () => Error): Condition => ({ expr: 'version = :v AND attribute_not_exists(deletingAt)', values: { ':v': version }, error });

/** Replace a group if it still has the version that was read (optimistic locking). */
export function replaceGroupWrite(next: GroupRecord, expectedVersion: number): TxWrite {
  return groups.put(
    next,
    unchangedSince(expectedVersion, () => new StaleGroupError('The group was changed concurrently')),
  );
}

/** Point the default guard at a group, in one transaction that proves the former default and the group's existence. */
export function setDefaultWrites(accountId: string, from: string | null, to: GroupRecord): TxWrite[] {
  const stale = () => new StaleGroupError('The default group was changed concurrently');
  return [defaultGuards.put({ accountId, groupId: to.id }, from ? { expr: 'groupId = :from', values: { ':from': from }, error: stale } : conditions.absent(stale)), groupLiveCheck(to)];
}

/** Proves inside a transaction that the group exists and is not being deleted; with `exact`, that it is unchanged since read. */
export function groupLiveCheck(g: Pick<GroupRecord, 'accountId' | 'id' | 'version'>, exact = false): TxWrite {
  const error = () => new StaleGroupError('The group was changed or deleted concurrently');
  return groups.check(g, exact ? unchangedSince(g.version, error) : { expr: 'attribute_exists(pk) AND attribute_not_exists(deletingAt)', error });
}

/**
 * Mark a group deleted (it answers 404 from now on); `related` (its
 * group.deleted event and its audits) commits with it. The default guard is proved in the
 * same transaction: a group that is not the default must still not be one
 * (`handoff` undefined); deleting the default hands it to `handoff.to` (proved
 * live) or, with no group left, removes the guard, so an account with groups
 * always has exactly one default.
 */
export async function markGroupDeleting(g: GroupRecord, at: string, related: TxWrite[], handoff?: { to: GroupRecord | null }): Promise<void> {
  const stale = () => new StaleGroupError('The default group was changed concurrently');
  const guard: TxWrite[] = !handoff
    ? [defaultGuards.check({ accountId: g.accountId }, { expr: 'attribute_not_exists(groupId) OR groupId <> :g', values: { ':g': g.id }, error: stale })]
    : handoff.to
      ? setDefaultWrites(g.accountId, g.id, handoff.to)
      : [defaultGuards.delete({ accountId: g.accountId }, { expr: 'groupId = :g', values: { ':g': g.id }, error: stale })];
  await transactWrite([
    groups.updateAttributes(
      g,
      { set: { deletingAt: at, isActive: false, version: g.version + 1 } },
      unchangedSince(g.version, () => new StaleGroupError('The group was changed concurrently')),
    ),
    ...guard,
    ...related,
  ]);
}

/** Remove a group item whose deletion has been finished. */
export async function removeDeletedGroup(accountId: string, groupId: string): Promise<void> {
  await transactWrite([groups.delete({ accountId, id: groupId }, { expr: 'attribute_not_exists(pk) OR attribute_exists(deletingAt)' })]);
}

export interface Loads {
  /** Open tickets per agent across everything. */
  agent: Map<string, number>;
  /** Open tickets per agent in the group, and their last assignment there. */
  inGroup: Map<string, { openTickets: number; lastAssignedAt: string | null }>;
  users: Map<string, { status: string; role: UserRole }>;
}

/** Items by key, strongly consistent, 100 keys per BatchGetItem, the batches in parallel (a group has up to 500 members). */
async function readItems(keyList: Key[]): Promise<Map<string, Record<string, unknown>>> {
  const chunks: Key[][] = [];
  for (let i = 0; i < keyList.length; i += 100) chunks.push(keyList.slice(i, i + 100));
  const found = (await Promise.all(chunks.map((chunk) => batchGet(chunk, { consistent: true })))).flat();
  return new Map(found.map((i) => [`${i.pk}|${i.sk}`, i]));
}
const at = (items: Map<string, Record<string, unknown>>, k: Key) => items.get(`${k.pk}|${k.sk}`);

/**
 * Load counters and user items of some agents, in one batched read. The user
 * items are read with the counters (their key and reading come from the users
 * module) because distribution needs them for every member at once; only
 * status and role are used.
 */
export async function loadsOf(accountId: string, groupId: string, userIds: string[]): Promise<Loads> {
  const wanted = userIds.map((u) => ({ agent: agentLoads.key({ accountId, userId: u }), inGroup: groupLoads.key({ accountId, groupId, userId: u }), user: userKey(accountId, u) }));
  const items = await readItems(wanted.flatMap((w) => [w.agent, w.inGroup, w.user]));
  const loads: Loads = { agent: new Map(), inGroup: new Map(), users: new Map() };
  userIds.forEach((u, n) => {
    const [agent, inGroup, user] = [at(items, wanted[n].agent), at(items, wanted[n].inGroup), at(items, wanted[n].user)];
    const a = agent ? agentLoads.fromItem(agent) : null;
    const g = inGroup ? groupLoads.fromItem(inGroup) : null;
    loads.agent.set(u, Number(a?.openTickets ?? 0));
    loads.inGroup.set(u, { openTickets: Number(g?.openTickets ?? 0), lastAssignedAt: g?.lastAssignedAt ?? null });
    if (user) {
      const { status, role } = userFromItem(user);
      loads.users.set(u, { status: String(status), role });
    }
  });
  return loads;
}

/** Users of the account among `userIds`, with status and role (member validation). */
export async function usersOf(accountId: string, userIds: string[]): Promise<Map<string, { status: string; role: UserRole }>> {
  const items = await readItems(userIds.map((u) => userKey(accountId, u)));
  return new Map([...items.values()].map(userFromItem).map((u) => [u.id, { status: String(u.status), role: u.role }]));
}

/** With a cap (automatic distribution), the counter moves only while under it. */
const underCap = (cap: number | null | undefined, error: () => Error): Condition | undefined =>
  cap == null ? undefined : { expr: 'attribute_not_exists(openTickets) OR openTickets < :cap', values: { ':cap': cap }, error };

/** Move an agent's global open-ticket count; with a cap (automatic distribution), only while under it. */
export function agentLoadWrite(accountId: string, userId: string, delta: number, cap?: number | null): TxWrite {
  return agentLoads.updateAttributes(
    { accountId, userId },
    { set: { type: groupEntities.agentLoad.type, userId }, add: { openTickets: delta } },
    underCap(cap, () => new DistributionRaceError('The agent reached a cap concurrently')),
  );
}

/** Move an agent's open-ticket count in a group; an automatic assignment also stamps the turn and respects the cap. */
export function groupLoadWrite(accountId: string, groupId: string, userId: string, delta: number, assigned?: { at: string; cap: number | null }): TxWrite {
  return groupLoads.updateAttributes(
    { accountId, groupId, userId },
    { set: { type: groupEntities.groupLoad.type, groupId, userId, ...(assigned ? { lastAssignedAt: assigned.at } : {}) }, add: { openTickets: delta } },
    underCap(assigned?.cap, () => new DistributionRaceError('The agent reached the group cap concurrently')),
  );
}

/** Proves the user can still take tickets: active, agent role or above. */
export const userEligibleCheck = (accountId: string, userId: string): TxWrite => deskAgentCheck(accountId, userId, () => new DistributionRaceError('The agent changed concurrently'));

/** Index items of a ticket in a group: present (put) or not (delete). */
export function groupTicketWrite(accountId: string, groupId: string, ticketId: string, present: boolean): TxWrite {
  const t = { accountId, groupId, ticketId };
  return present ? groupTickets.put(t) : groupTickets.delete(t);
}

export function groupWaitingWrite(accountId: string, groupId: string, ticketId: string, present: boolean): TxWrite {
  const t = { accountId, groupId, ticketId };
  return present ? waitingTickets.put(t) : waitingTickets.delete(t);
}

/** Ticket ids of a group's index items in id order, from after `after` (consistent: the ticket writes that moved them just committed). */
async function ticketIdsOf(index: typeof groupTickets, accountId: string, groupId: string, limit: number, after?: string): Promise<string[]> {
  const prefix = index.key({ accountId, groupId, ticketId: '' });
  const page = await queryPage<Record<string, unknown>>({
    ...index.query('byGroup', { accountId, groupId }, { skBeginsWith: prefix.sk }),
    consistent: true,
    limit,
    startKey: after ? index.key({ accountId, groupId, ticketId: after }) : undefined,
  });
  return page.items.map((i) => index.fromItem(i).ticketId);
}

/** Waiting (unassigned, open) tickets of a group, oldest first (ticket ids are time-ordered). */
export const waitingTicketIds = (accountId: string, groupId: string, limit: number, after?: string) => ticketIdsOf(waitingTickets, accountId, groupId, limit, after);

/** Tickets of a group, in id order. */
export const groupTicketIds = (accountId: string, groupId: string, limit: number) => ticketIdsOf(groupTickets, accountId, groupId, limit);

/** Drop a ticket's index items in a group (repairs strays during a group's deletion). */
export async function dropTicketIndex(accountId: string, groupId: string, ticketId: string): Promise<void> {
  await batchDelete([groupTickets.key({ accountId, groupId, ticketId }), waitingTickets.key({ accountId, groupId, ticketId })]);
}

/** Delete the per-agent counters of a deleted group (no ticket points at it any more). */
export async function deleteGroupLoads(accountId: string, groupId: string): Promise<void> {
  const prefix = groupLoads.key({ accountId, groupId, userId: '' }).sk;
  for (;;) {
    const page = await queryPage<Record<string, unknown>>({ ...groupLoads.query('byGroup', { accountId, groupId }, { skBeginsWith: prefix }), consistent: true, limit: 25 });
    if (!page.items.length) return;
    await batchDelete(page.items.map((i) => groupLoads.key({ accountId, groupId, userId: groupLoads.fromItem(i).userId })));
  }
}
