import { BatchGetCommand, BatchWriteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { UserRole } from '../auth/principal.ts';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';
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

const SUMMARY = [
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
  'createdAt',
  'updatedAt',
  'version',
  'deletingAt',
  'memberCount',
] as const;

const toRecord = (i: Record<string, unknown>): GroupRecord => ({
  ...(Object.fromEntries(SUMMARY.map((a) => [a, i[a] ?? null])) as unknown as GroupRecord),
  deletingAt: (i.deletingAt as string) ?? undefined,
  members: (i.members as GroupRecord['members']) ?? {},
});

const item = (g: GroupRecord) => ({ ...keys.group(g.accountId, g.id), type: 'group', ...g, memberCount: Object.keys(g.members).length });

/** Get a group (consistent: distribution decisions and member changes start from it). */
export async function getGroup(accountId: string, groupId: string): Promise<GroupRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.group(accountId, groupId), ConsistentRead: true }));
  return out.Item ? toRecord(out.Item) : null;
}

/** The account's group items (groups per account are few; one Query on the prefix), reading only `projection`. */
const queryGroups = (accountId: string, projection: string, names: Record<string, string>) =>
  queryAll<Record<string, unknown>>({
    keyCondition: 'pk = :pk AND begins_with(sk, :p)',
    values: { ':pk': keys.accountPk(accountId), ':p': keys.groupPrefix },
    names,
    projection,
    forward: true,
  });

/** Every group of an account without member maps. */
export async function listGroupSummaries(accountId: string): Promise<GroupSummary[]> {
  const items = await queryGroups(accountId, SUMMARY.map((a) => `#${a}`).join(', '), Object.fromEntries(SUMMARY.map((a) => [`#${a}`, a])));
  return items.map((i) => {
    const { members: _m, ...rest } = toRecord(i);
    return { ...rest, memberCount: Number(i.memberCount ?? 0) };
  });
}

/** Ids of the active, distributing groups a user is a member of (one Query projecting only that member's entry). */
export async function distributingGroupsOf(accountId: string, userId: string): Promise<string[]> {
  const items = await queryGroups(accountId, 'id, isActive, distributionMode, deletingAt, members.#u', { '#u': userId });
  return items.filter((i) => (i.members as Record<string, unknown> | undefined)?.[userId] && i.isActive && i.distributionMode !== 'manual' && !i.deletingAt).map((i) => String(i.id));
}

export async function getDefaultGroupId(accountId: string): Promise<string | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.defaultGroup(accountId), ConsistentRead: true }));
  return (out.Item?.groupId as string | undefined) ?? null;
}

/** Create a group; as the account's first group it also claims the default guard (a concurrent first group makes this retry). */
export function createGroupWrites(g: GroupRecord, claimDefault: boolean): TxWrite[] {
  const writes: TxWrite[] = [{ item: { Put: { TableName: tableName(), Item: item(g), ConditionExpression: 'attribute_not_exists(pk)' } } }];
  if (claimDefault) {
    writes.push({
      item: { Put: { TableName: tableName(), Item: { ...keys.defaultGroup(g.accountId), type: 'defaultGroup', groupId: g.id }, ConditionExpression: 'attribute_not_exists(pk)' } },
      onConditionFailed: () => new StaleGroupError('Another group became the default concurrently'),
    });
  }
  return writes;
}

/** Replace a group if it still has the version that was read (optimistic locking). */
export function replaceGroupWrite(next: GroupRecord, expectedVersion: number): TxWrite {
  return {
    item: { Put: { TableName: tableName(), Item: item(next), ConditionExpression: 'version = :v AND attribute_not_exists(deletingAt)', ExpressionAttributeValues: { ':v': expectedVersion } } },
    onConditionFailed: () => new StaleGroupError('The group was changed concurrently'),
  };
}

/** Point the default guard at a group, in one transaction that proves the former default and the group's existence. */
export function setDefaultWrites(accountId: string, from: string | null, to: GroupRecord): TxWrite[] {
  return [
    {
      item: {
        Put: {
          TableName: tableName(),
          Item: { ...keys.defaultGroup(accountId), type: 'defaultGroup', groupId: to.id },
          ConditionExpression: from ? 'groupId = :from' : 'attribute_not_exists(pk)',
          ExpressionAttributeValues: from ? { ':from': from } : undefined,
        },
      },
      onConditionFailed: () => new StaleGroupError('The default group was changed concurrently'),
    },
    groupLiveCheck(to),
  ];
}

/** Proves inside a transaction that the group exists and is not being deleted; with `exact`, that it is unchanged since read. */
export function groupLiveCheck(g: Pick<GroupRecord, 'accountId' | 'id' | 'version'>, exact = false): TxWrite {
  return {
    item: {
      ConditionCheck: {
        TableName: tableName(),
        Key: keys.group(g.accountId, g.id),
        ConditionExpression: exact ? 'version = :v AND attribute_not_exists(deletingAt)' : 'attribute_exists(pk) AND attribute_not_exists(deletingAt)',
        ExpressionAttributeValues: exact ? { ':v': g.version } : undefined,
      },
    },
    onConditionFailed: () => new StaleGroupError('The group was changed or deleted concurrently'),
  };
}

/**
 * Mark a group deleted (it answers 404 from now on); `related` (its
 * group.deleted event) commits with it. The default guard is proved in the
 * same transaction: a group that is not the default must still not be one
 * (`handoff` undefined); deleting the default hands it to `handoff.to` (proved
 * live) or, with no group left, removes the guard, so an account with groups
 * always has exactly one default.
 */
export async function markGroupDeleting(g: GroupRecord, at: string, related: TxWrite[], handoff?: { to: GroupRecord | null }): Promise<void> {
  const stale = () => new StaleGroupError('The default group was changed concurrently');
  const guard: TxWrite[] = !handoff
    ? [
        {
          item: {
            ConditionCheck: {
              TableName: tableName(),
              Key: keys.defaultGroup(g.accountId),
              ConditionExpression: 'attribute_not_exists(groupId) OR groupId <> :g',
              ExpressionAttributeValues: { ':g': g.id },
            },
          },
          onConditionFailed: stale,
        },
      ]
    : handoff.to
      ? setDefaultWrites(g.accountId, g.id, handoff.to)
      : [
          {
            item: { Delete: { TableName: tableName(), Key: keys.defaultGroup(g.accountId), ConditionExpression: 'groupId = :g', ExpressionAttributeValues: { ':g': g.id } } },
            onConditionFailed: stale,
          },
        ];
  await transactWrite([
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.group(g.accountId, g.id),
          UpdateExpression: 'SET deletingAt = :at, isActive = :f, version = :next',
          ConditionExpression: 'version = :v AND attribute_not_exists(deletingAt)',
          ExpressionAttributeValues: { ':at': at, ':f': false, ':v': g.version, ':next': g.version + 1 },
        },
      },
      onConditionFailed: () => new StaleGroupError('The group was changed concurrently'),
    },
    ...guard,
    ...related,
  ]);
}

/** Remove a group item whose deletion has been finished. */
export async function removeDeletedGroup(accountId: string, groupId: string): Promise<void> {
  await transactWrite([{ item: { Delete: { TableName: tableName(), Key: keys.group(accountId, groupId), ConditionExpression: 'attribute_not_exists(pk) OR attribute_exists(deletingAt)' } } }]);
}

export interface Loads {
  /** Open tickets per agent across everything. */
  agent: Map<string, number>;
  /** Open tickets per agent in the group, and their last assignment there. */
  inGroup: Map<string, { openTickets: number; lastAssignedAt: string | null }>;
  users: Map<string, { status: string; role: UserRole }>;
}

async function batchGet(keyList: Record<string, string>[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const chunks: Record<string, string>[][] = [];
  for (let i = 0; i < keyList.length; i += 100) chunks.push(keyList.slice(i, i + 100));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: Record<string, unknown>[] | undefined = chunk;
      while (pending?.length) {
        const res = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: true } } }));
        out.push(...(res.Responses?.[tableName()] ?? []));
        pending = res.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
      }
    }),
  );
  return out;
}

/**
 * Load counters and user items of some agents, in batched GetItems. The user
 * items are read here (not through the users module) because distribution
 * needs them for every member at once; only status and role are used.
 */
export async function loadsOf(accountId: string, groupId: string, userIds: string[]): Promise<Loads> {
  const wanted = userIds.flatMap((u) => [keys.agentLoad(accountId, u), keys.groupLoad(accountId, groupId, u), keys.user(accountId, u)]);
  const items = await batchGet(wanted);
  const loads: Loads = { agent: new Map(), inGroup: new Map(), users: new Map() };
  const bySk = new Map(items.map((i) => [String(i.sk), i]));
  for (const u of userIds) {
    const a = bySk.get(keys.agentLoad(accountId, u).sk);
    const g = bySk.get(keys.groupLoad(accountId, groupId, u).sk);
    const user = bySk.get(keys.user(accountId, u).sk);
    loads.agent.set(u, Number(a?.openTickets ?? 0));
    loads.inGroup.set(u, { openTickets: Number(g?.openTickets ?? 0), lastAssignedAt: (g?.lastAssignedAt as string | undefined) ?? null });
    if (user) loads.users.set(u, { status: String(user.status), role: user.role as UserRole });
  }
  return loads;
}

/** Users of the account among `userIds`, with status and role (member validation). */
export async function usersOf(accountId: string, userIds: string[]): Promise<Map<string, { status: string; role: UserRole }>> {
  const items = await batchGet(userIds.map((u) => keys.user(accountId, u)));
  return new Map(items.map((i) => [String(i.id), { status: String(i.status), role: i.role as UserRole }]));
}

const capCondition = (cap: number | null | undefined) => (cap == null ? {} : { ConditionExpression: 'attribute_not_exists(openTickets) OR openTickets < :cap', cap });

/** Move an agent's global open-ticket count; with a cap (automatic distribution), only while under it. */
export function agentLoadWrite(accountId: string, userId: string, delta: number, cap?: number | null): TxWrite {
  const c = capCondition(cap);
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.agentLoad(accountId, userId),
        UpdateExpression: 'SET #t = :t, userId = :u ADD openTickets :d',
        ExpressionAttributeNames: { '#t': 'type' },
        ExpressionAttributeValues: { ':t': 'agentLoad', ':u': userId, ':d': delta, ...(c.ConditionExpression ? { ':cap': c.cap } : {}) },
        ConditionExpression: c.ConditionExpression,
      },
    },
    onConditionFailed: () => new DistributionRaceError('The agent reached a cap concurrently'),
  };
}

/** Move an agent's open-ticket count in a group; an automatic assignment also stamps the turn and respects the cap. */
export function groupLoadWrite(accountId: string, groupId: string, userId: string, delta: number, assigned?: { at: string; cap: number | null }): TxWrite {
  const c = capCondition(assigned?.cap);
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.groupLoad(accountId, groupId, userId),
        UpdateExpression: `SET #t = :t, groupId = :g, userId = :u${assigned ? ', lastAssignedAt = :at' : ''} ADD openTickets :d`,
        ExpressionAttributeNames: { '#t': 'type' },
        ExpressionAttributeValues: { ':t': 'groupLoad', ':g': groupId, ':u': userId, ':d': delta, ...(assigned ? { ':at': assigned.at } : {}), ...(c.ConditionExpression ? { ':cap': c.cap } : {}) },
        ConditionExpression: c.ConditionExpression,
      },
    },
    onConditionFailed: () => new DistributionRaceError('The agent reached the group cap concurrently'),
  };
}

/** Proves the user can still take tickets: active, agent role or above. */
export function userEligibleCheck(accountId: string, userId: string): TxWrite {
  return {
    item: {
      ConditionCheck: {
        TableName: tableName(),
        Key: keys.user(accountId, userId),
        ConditionExpression: '#s = :active AND #r IN (:owner, :admin, :member)',
        ExpressionAttributeNames: { '#s': 'status', '#r': 'role' },
        ExpressionAttributeValues: { ':active': 'active', ':owner': 'owner', ':admin': 'admin', ':member': 'member' },
      },
    },
    onConditionFailed: () => new DistributionRaceError('The agent changed concurrently'),
  };
}

/** Index items of a ticket in a group: present (put) or not (delete). */
export function groupTicketWrite(accountId: string, groupId: string, ticketId: string, present: boolean): TxWrite {
  const key = keys.groupTicket(accountId, groupId, ticketId);
  return { item: present ? { Put: { TableName: tableName(), Item: { ...key, type: 'groupTicket', groupId, ticketId } } } : { Delete: { TableName: tableName(), Key: key } } };
}

export function groupWaitingWrite(accountId: string, groupId: string, ticketId: string, present: boolean): TxWrite {
  const key = keys.groupWaiting(accountId, groupId, ticketId);
  return { item: present ? { Put: { TableName: tableName(), Item: { ...key, type: 'groupWaiting', groupId, ticketId } } } : { Delete: { TableName: tableName(), Key: key } } };
}

async function idsUnder(accountId: string, prefix: string, limit: number, after?: string): Promise<string[]> {
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.accountPk(accountId), ':p': prefix },
      ExclusiveStartKey: after ? { pk: keys.accountPk(accountId), sk: `${prefix}${after}` } : undefined,
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => String(i.sk).slice(prefix.length));
}

/** Waiting (unassigned, open) tickets of a group, oldest first (ticket ids are time-ordered). */
export const waitingTicketIds = (accountId: string, groupId: string, limit: number, after?: string) => idsUnder(accountId, keys.groupWaitingPrefix(groupId), limit, after);

/** Tickets of a group, in id order. */
export const groupTicketIds = (accountId: string, groupId: string, limit: number) => idsUnder(accountId, keys.groupTicketPrefix(groupId), limit);

/** Drop a ticket's index items in a group (repairs strays during a group's deletion). */
export async function dropTicketIndex(accountId: string, groupId: string, ticketId: string): Promise<void> {
  await ddb.send(
    new BatchWriteCommand({
      RequestItems: { [tableName()]: [{ DeleteRequest: { Key: keys.groupTicket(accountId, groupId, ticketId) } }, { DeleteRequest: { Key: keys.groupWaiting(accountId, groupId, ticketId) } }] },
    }),
  );
}

/** Delete the per-agent counters of a deleted group (no ticket points at it any more). */
export async function deleteGroupLoads(accountId: string, groupId: string): Promise<void> {
  for (;;) {
    const users = await idsUnder(accountId, keys.groupLoadPrefix(groupId), 25);
    if (!users.length) return;
    await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName()]: users.map((u) => ({ DeleteRequest: { Key: keys.groupLoad(accountId, groupId, u) } })) } }));
  }
}
