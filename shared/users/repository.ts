import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { UserRole } from '../auth/principal.ts';
import { ddb, tableName } from '../db/client.ts';
import { keys, textSortKey } from '../db/keys.ts';
import { batchGet, countMatches, queryPage, type Key, type PageQuery } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../domain/errors.ts';
import type { UserStatus } from './model.ts';

/** A user as stored. Attribute names are camelCase; the API maps them to snake_case. */
export interface UserRecord {
  id: string;
  accountId: string;
  email: string;
  name: string;
  avatarUrl: string | null;
  role: UserRole;
  status: UserStatus;
  createdAt: string;
  updatedAt: string;
  lastLoginAt: string | null;
  version: number;
  /** Hashes of the user's live API keys, whose lookups carry role and status (kept in step here). */
  apiKeyHashes?: Set<string>;
}

const ATTRS = ['id', 'accountId', 'email', 'name', 'avatarUrl', 'role', 'status', 'createdAt', 'updatedAt', 'lastLoginAt', 'version'] as const;

const toRecord = (item: Record<string, unknown>): UserRecord => {
  const record = Object.fromEntries(ATTRS.map((a) => [a, item[a] ?? null])) as unknown as UserRecord;
  if (item.apiKeyHashes instanceof Set) record.apiKeyHashes = item.apiKeyHashes as Set<string>;
  return record;
};

/** Sort keys for the name (gsi1) and email (gsi2) orders; the id breaks ties. */
function indexAttributes(u: Pick<UserRecord, 'accountId' | 'id' | 'name' | 'email'>) {
  const pk = keys.usersByName(u.accountId);
  return {
    gsi1pk: pk,
    gsi1sk: textSortKey(u.name, u.id),
    gsi2pk: pk,
    gsi2sk: textSortKey(u.email, u.id),
    searchText: `${u.name.toLowerCase()}\n${u.email.toLowerCase()}`,
  };
}

/** The writes that create a user and claim its email; used alone or inside a larger transaction. */
export function putUserWrites(u: UserRecord): TxWrite[] {
  return [
    {
      item: { Put: { TableName: tableName(), Item: { ...keys.user(u.accountId, u.id), type: 'user', ...u, ...indexAttributes(u) }, ConditionExpression: 'attribute_not_exists(pk)' } },
    },
    {
      item: { Put: { TableName: tableName(), Item: { ...keys.userEmail(u.accountId, u.email), type: 'userEmail', userId: u.id }, ConditionExpression: 'attribute_not_exists(pk)' } },
      onConditionFailed: () => new AlreadyExistsError(`A user with email ${u.email} already exists`),
    },
  ];
}

/** Create a user; the email guard makes a duplicate fail atomically; `related` (its invitation event) commits with it. */
export async function createUser(u: UserRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([...putUserWrites(u), ...related]);
}

/** Get one user of an account (consistent when a write will be conditioned on what it read). */
export async function getUser(accountId: string, userId: string, consistent = false): Promise<UserRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.user(accountId, userId), ...(consistent ? { ConsistentRead: true } : {}) }));
  return out.Item ? toRecord(out.Item) : null;
}

/** Get a user and its account's record in one round trip (the authorizer's read for session tokens). */
export async function getUserAndAccount(accountId: string, userId: string): Promise<{ user: UserRecord | null; account: Record<string, unknown> | null }> {
  const userKey = keys.user(accountId, userId);
  const accountKey = keys.account(accountId);
  const items = await batchGet([userKey, accountKey]);
  const user = items.find((i) => i.sk === userKey.sk);
  const account = items.find((i) => i.sk === accountKey.sk);
  return { user: user ? toRecord(user) : null, account: account ?? null };
}

export type UserChanges = Partial<Pick<UserRecord, 'name' | 'role' | 'status' | 'lastLoginAt' | 'updatedAt'>>;

/**
 * When role or status changes, each of the user's key lookups gets the new
 * values in the same transaction, so the very next request with any of its
 * keys sees them (decisions §1). A lookup revoked meanwhile fails the
 * condition instead of coming back (revocation also bumps the version).
 */
function keyLookupWrites(current: UserRecord, changes: UserChanges): TxWrite[] {
  const set: Record<string, unknown> = {};
  if (changes.role !== undefined && changes.role !== current.role) set.role = changes.role;
  if (changes.status !== undefined && changes.status !== current.status) set.status = changes.status;
  if (!Object.keys(set).length) return [];
  return [...(current.apiKeyHashes ?? [])].map((hash) => ({
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.apiKeyHash(hash),
        UpdateExpression: `SET ${Object.keys(set)
          .map((k) => `#${k} = :${k}`)
          .join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.fromEntries(Object.keys(set).map((k) => [`#${k}`, k])),
        ExpressionAttributeValues: Object.fromEntries(Object.entries(set).map(([k, v]) => [`:${k}`, v])),
      },
    },
    onConditionFailed: () => new ConflictError("The user's API keys changed concurrently; retry the request"),
  }));
}

function updateItem(current: UserRecord, changes: UserChanges): TxWrite {
  const next = { ...current, ...changes };
  const set: Record<string, unknown> = { ...changes, ...indexAttributes(next), version: current.version + 1 };
  const names = Object.fromEntries(Object.keys(set).map((k) => [`#${k}`, k]));
  const values = Object.fromEntries(Object.entries(set).map(([k, v]) => [`:${k}`, v]));
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.user(current.accountId, current.id),
        UpdateExpression: `SET ${Object.keys(set)
          .map((k) => `#${k} = :${k}`)
          .join(', ')}`,
        ConditionExpression: '#version = :expectedVersion',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ':expectedVersion': current.version },
      },
    },
    onConditionFailed: () => new ConflictError('The user was changed concurrently; retry the request'),
  };
}

/** Update a user with optimistic locking on its version. */
export async function updateUser(current: UserRecord, changes: UserChanges): Promise<UserRecord> {
  await transactWrite([updateItem(current, changes), ...keyLookupWrites(current, changes)]);
  return { ...current, ...changes, version: current.version + 1 };
}

/**
 * Move ownership from `owner` to `target` in one transaction: the OWNER guard
 * must still name the former owner, so of many concurrent transfers exactly
 * one commits.
 */
export async function transferOwnership(owner: UserRecord, target: UserRecord, targetChanges: UserChanges & { role: 'owner'; updatedAt: string }): Promise<UserRecord> {
  await transactWrite([
    updateItem(target, targetChanges),
    ...keyLookupWrites(target, targetChanges),
    // The version check also proves the former owner is still the owner.
    updateItem(owner, { role: 'admin', updatedAt: targetChanges.updatedAt }),
    ...keyLookupWrites(owner, { role: 'admin' }),
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.owner(owner.accountId),
          UpdateExpression: 'SET userId = :to',
          ConditionExpression: 'userId = :from',
          ExpressionAttributeValues: { ':to': target.id, ':from': owner.id },
        },
      },
      onConditionFailed: () => new ConflictError('Ownership was changed concurrently'),
    },
  ]);
  return { ...target, ...targetChanges, version: target.version + 1 };
}

class OwnerDeleteRefusedError extends ConflictError {}
/** The user changed between read and delete: re-read and retry. */
export class UserChangedError extends ConflictError {}

/** Delete a user and release its email; never the owner (checked in the same write). */
export async function deleteUser(u: UserRecord): Promise<void> {
  try {
    await transactWrite([
      {
        item: {
          Delete: {
            TableName: tableName(),
            Key: keys.user(u.accountId, u.id),
            // The version check keeps a key created meanwhile from outliving its user.
            ConditionExpression: 'attribute_exists(pk) AND #role <> :owner AND #version = :version',
            ExpressionAttributeNames: { '#role': 'role', '#version': 'version' },
            ExpressionAttributeValues: { ':owner': 'owner', ':version': u.version },
          },
        },
        onConditionFailed: () => new OwnerDeleteRefusedError('The owner cannot be deleted; transfer ownership first'),
      },
      { item: { Delete: { TableName: tableName(), Key: keys.userEmail(u.accountId, u.email) } } },
      // The user's keys stop working with it.
      ...[...(u.apiKeyHashes ?? [])].map((hash) => ({ item: { Delete: { TableName: tableName(), Key: keys.apiKeyHash(hash) } } })),
    ]);
  } catch (err) {
    // The condition fails for the owner, for a user deleted meanwhile and for one changed meanwhile: tell them apart.
    if (!(err instanceof OwnerDeleteRefusedError)) throw err;
    const now = await getUser(u.accountId, u.id, true);
    if (!now) throw new NotFoundError('User');
    if (now.role === 'owner') throw err;
    throw new UserChangedError('The user was changed concurrently; retry the request');
  }
}

export interface UserListFilter {
  role?: UserRole;
  status?: UserStatus;
  search?: string;
  sort: 'created_at' | 'name' | 'email';
  order: 'asc' | 'desc';
}

function listQuery(accountId: string, f: UserListFilter): Omit<PageQuery, 'limit' | 'startKey'> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const filters: string[] = [];
  const add = (attr: string, value: string, condition: string) => {
    names[`#${attr}`] = attr === 'search' ? 'searchText' : attr;
    values[`:${attr}`] = value;
    filters.push(condition);
  };
  if (f.role) add('role', f.role, '#role = :role');
  if (f.status) add('status', f.status, '#status = :status');
  if (f.search) add('search', f.search.toLowerCase(), 'contains(#search, :search)');
  const forward = f.order === 'asc';
  const filter = filters.length ? filters.join(' AND ') : undefined;
  if (f.sort === 'created_at') {
    // Ids are time-ordered, so the base table's key order is creation order.
    return { keyCondition: 'pk = :pk AND begins_with(sk, :prefix)', names: { ...names }, values: { ...values, ':pk': keys.accountPk(accountId), ':prefix': keys.userPrefix }, filter, forward };
  }
  const index = f.sort === 'name' ? 'gsi1' : 'gsi2';
  return { index, keyCondition: `${index}pk = :pk`, names, values: { ...values, ':pk': keys.usersByName(accountId) }, filter, forward };
}

/** List an account's users in the requested order, filtered; a Query on the base table or gsi1/gsi2. */
export async function listUsers(accountId: string, f: UserListFilter, limit: number, startKey?: Key) {
  const q = listQuery(accountId, f);
  const page = await queryPage<Record<string, unknown>>({ ...q, limit, startKey });
  return { items: page.items.map(toRecord), nextKey: page.nextKey };
}

/** Count the users a list would return, up to `cap`. */
export async function countUsers(accountId: string, f: UserListFilter, cap: number): Promise<number> {
  const { forward: _f, ...q } = listQuery(accountId, f);
  return countMatches(q, cap);
}
