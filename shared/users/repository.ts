import type { UserRole, UserStatus } from '../auth/principal.ts';
import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { textSortKey } from '../db/keys.ts';
import { userEntities } from '../db/entities/users.ts';
import { countMatches, queryAll, queryPage, type Key } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../domain/errors.ts';
import { indexWrites, searchIndex, type Searchable } from '../search/word-index.ts';
import { recordWords, searchFilter, searchTerms, searchText } from '../search/words.ts';
import { historyShard } from '../db/shard.ts';

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
  /** Hashes of the user's live API keys, whose lookups carry role and status (kept in step by the users service). */
  apiKeyHashes?: Set<string>;
}

const users = bindEntity<UserRecord>(userEntities.user, {
  fields: ['id', 'accountId', 'email', 'name', 'avatarUrl', 'role', 'status', 'createdAt', 'updatedAt', 'lastLoginAt', 'version', 'apiKeyHashes'],
  // A login changes last_login_at (and may activate the user) without updated_at: the export sees it at the later of the two.
  keyValues: (u) => ({ changeShard: historyShard(u.id), changedAt: userChangedAt(u) }),
  extra: (u) => ({ searchText: searchText(wordsOf(u)) }),
  normalize: ({ apiKeyHashes, ...u }) => (apiKeyHashes instanceof Set ? { ...u, apiKeyHashes } : u),
});
const wordsOf = (u: UserRecord) => recordWords({ names: [u.name], addresses: [u.email] });
/** What the word index holds of a user (decisions §13): words, sort keys, and role and status for the list's filters. */
const searchable = (u: UserRecord): Searchable => ({
  accountId: u.accountId,
  id: u.id,
  words: wordsOf(u),
  sort: { name: textSortKey(u.name, u.id), email: textSortKey(u.email, u.id) },
  filters: { role: u.role, status: u.status },
});
const emailGuards = bindEntity<{ accountId: string; email: string; userId: string }>(userEntities.userEmail, { fields: ['userId'] });
const ownerGuards = bindEntity<{ accountId: string; userId: string }>(userEntities.accountOwner, { fields: ['userId'] });

/** The writes that create a user and claim its email; used alone or inside a larger transaction. */
function putUserWrites(u: UserRecord): TxWrite[] {
  return [
    users.put(u, conditions.absent()),
    ...indexWrites('user', null, searchable(u)),
    emailGuards.put(
      { accountId: u.accountId, email: u.email, userId: u.id },
      conditions.absent(() => new AlreadyExistsError(`A user with email ${u.email} already exists`)),
    ),
  ];
}

/** The writes that create an account's owner: the user, its email guard and the guard naming it the owner (in the account's transaction). */
export function createOwnerWrites(owner: UserRecord): TxWrite[] {
  return [...putUserWrites(owner), ownerGuards.put({ accountId: owner.accountId, userId: owner.id })];
}

/** Create a user; the email guard makes a duplicate fail atomically; `related` (its invitation event) commits with it. */
export async function createUser(u: UserRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([...putUserWrites(u), ...related]);
}

/** Get one user of an account (consistent when a write will be conditioned on what it read). */
export async function getUser(accountId: string, userId: string, consistent = false): Promise<UserRecord | null> {
  return users.get({ accountId, id: userId }, { consistent });
}

/** A user item's key and its reading, for a read batched with another module's item (the authorizer's user and account). */
export const userKey = (accountId: string, userId: string): Key => users.key({ accountId, id: userId });
/** When a user last changed, for the incremental export: updated_at, or the last login when later. */
export const userChangedAt = (u: Pick<UserRecord, 'updatedAt' | 'lastLoginAt'>): string => (u.lastLoginAt && u.lastLoginAt > u.updatedAt ? u.lastLoginAt : u.updatedAt);

export const userFromItem = (item: Record<string, unknown>): UserRecord => users.fromItem(item);

/** Proves, in another module's transaction, that a user can still take tickets: active, agent role or above (group distribution). */
export const deskAgentCheck = (accountId: string, userId: string, error: () => Error): TxWrite =>
  users.check(
    { accountId, id: userId },
    {
      expr: '#s = :active AND #r IN (:owner, :admin, :member)',
      names: { '#s': 'status', '#r': 'role' },
      values: { ':active': 'active', ':owner': 'owner', ':admin': 'admin', ':member': 'member' },
      error,
    },
  );

export type UserChanges = Partial<Pick<UserRecord, 'name' | 'role' | 'status' | 'lastLoginAt' | 'updatedAt'>>;

const changedConcurrently = () => new ConflictError('The user was changed concurrently; retry the request');

/** The user with `changes`, version-checked; the index attributes and the words follow a new name, role or status. */
function updateItem(current: UserRecord, changes: UserChanges): TxWrite[] {
  const next = { ...current, ...changes, version: current.version + 1 };
  return [users.update(current, next, conditions.version('version', current.version, changedConcurrently)), ...indexWrites('user', searchable(current), searchable(next))];
}

/** Update a user with optimistic locking on its version; `related` (its key lookups) commits with it. */
export async function updateUser(current: UserRecord, changes: UserChanges, related: TxWrite[] = []): Promise<UserRecord> {
  await transactWrite([...updateItem(current, changes), ...related]);
  return { ...current, ...changes, version: current.version + 1 };
}

/**
 * Move ownership from `owner` to `target` in one transaction: the OWNER guard
 * must still name the former owner, so of many concurrent transfers exactly
 * one commits. `related` (both users' key lookups) commits with it.
 */
export async function transferOwnership(owner: UserRecord, target: UserRecord, targetChanges: UserChanges & { role: 'owner'; updatedAt: string }, related: TxWrite[] = []): Promise<UserRecord> {
  const stillOwner: Condition = { expr: '#owner = :from', names: { '#owner': 'userId' }, values: { ':from': owner.id }, error: () => new ConflictError('Ownership was changed concurrently') };
  await transactWrite([
    ...updateItem(target, targetChanges),
    // The version check also proves the former owner is still the owner.
    ...updateItem(owner, { role: 'admin', updatedAt: targetChanges.updatedAt }),
    ownerGuards.updateAttributes({ accountId: owner.accountId }, { set: { userId: target.id } }, stillOwner),
    ...related,
  ]);
  return { ...target, ...targetChanges, version: target.version + 1 };
}

/**
 * An API key's hash recorded on its user, in the key's transaction: the
 * version moves, so a concurrent role or status change (which rewrites every
 * lookup the user names) re-reads and sees the new key. At most `max` keys.
 */
export function addApiKeyHashWrite(user: UserRecord, hash: string, max: number, error: () => Error): TxWrite {
  return users.updateAttributes(
    user,
    { add: { apiKeyHashes: new Set([hash]) }, set: { version: user.version + 1 } },
    {
      expr: '#ver = :ver AND (attribute_not_exists(#hashes) OR size(#hashes) < :max)',
      names: { '#ver': 'version', '#hashes': 'apiKeyHashes' },
      values: { ':ver': user.version, ':max': max },
      error,
    },
  );
}

/** A revoked key's hash taken off its user (version-checked, so a concurrent role change cannot write the lookup back). */
export function removeApiKeyHashWrite(user: UserRecord, hash: string, error: () => Error): TxWrite {
  return users.updateAttributes(user, { deleteFromSet: { apiKeyHashes: new Set([hash]) }, set: { version: user.version + 1 } }, conditions.version('version', user.version, error));
}

class OwnerDeleteRefusedError extends ConflictError {}
/** The user changed between read and delete: re-read and retry. */
export class UserChangedError extends ConflictError {}

/** Delete a user and release its email; never the owner (checked in the same write). `related` (its key lookups) goes with it. */
export async function deleteUser(u: UserRecord, related: TxWrite[] = []): Promise<void> {
  try {
    await transactWrite([
      users.delete(u, {
        // The version check keeps a key created meanwhile from outliving its user.
        expr: 'attribute_exists(pk) AND #role <> :owner AND #version = :version',
        names: { '#role': 'role', '#version': 'version' },
        values: { ':owner': 'owner', ':version': u.version },
        error: () => new OwnerDeleteRefusedError('The owner cannot be deleted; transfer ownership first'),
      }),
      emailGuards.delete({ accountId: u.accountId, email: u.email }),
      ...indexWrites('user', searchable(u), null),
      ...related,
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

const SORT_PATTERN = { created_at: 'byCreated', name: 'byName', email: 'byEmail' } as const;

function listQuery(accountId: string, f: UserListFilter) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const filters: string[] = [];
  const add = (attr: string, value: string, condition: string) => {
    names[`#${attr}`] = attr;
    values[`:${attr}`] = value;
    filters.push(condition);
  };
  if (f.role) add('role', f.role, '#role = :role');
  if (f.status) add('status', f.status, '#status = :status');
  const terms = f.search ? searchTerms(f.search) : [];
  if (terms.length) {
    const words = searchFilter(terms);
    filters.push(words.expr);
    Object.assign(names, words.names);
    Object.assign(values, words.values);
  }
  const filter = filters.length ? { expr: filters.join(' AND '), names, values } : undefined;
  // created_at reads the table's key order: ids are time-ordered.
  return users.query(SORT_PATTERN[f.sort], { accountId }, { forward: f.order === 'asc', filter });
}

/**
 * List an account's users in the requested order, filtered: a search reads
 * the word index (decisions §13), answering its exact total too; otherwise a
 * Query on the base table or gsi1/gsi2. A search's cursor is the position
 * (sort key) of the page's last user.
 */
export async function listUsers(accountId: string, f: UserListFilter, limit: number, startKey?: Key): Promise<{ items: UserRecord[]; nextKey?: Key; total?: number }> {
  const terms = f.search ? searchTerms(f.search) : [];
  if (terms.length && (!startKey || 'position' in startKey)) {
    const forward = f.order === 'asc';
    const hits = await searchIndex(accountId, 'user', terms, { sortBy: f.sort === 'created_at' ? 'created' : f.sort, forward, filters: { role: f.role, status: f.status } });
    if (!hits.truncated) {
      const after = startKey?.position;
      const from = after === undefined ? 0 : hits.positions.findIndex((p) => (forward ? p > after : p < after));
      const start = from < 0 ? hits.ids.length : from;
      const ids = hits.ids.slice(start, start + limit);
      const found = new Map((await users.getMany(ids.map((id) => ({ accountId, id })))).map((u) => [u.id, u]));
      const more = start + limit < hits.ids.length;
      return { items: ids.flatMap((id) => found.get(id) ?? []), nextKey: more ? { position: hits.positions[start + limit - 1] } : undefined, total: hits.ids.length };
    }
  }
  const page = await queryPage<Record<string, unknown>>({ ...listQuery(accountId, f), limit, startKey: startKey && 'position' in startKey ? undefined : startKey });
  return { items: page.items.map(users.fromItem), nextKey: page.nextKey };
}

/**
 * The account's owner and admins who are not suspended, oldest first: who is
 * told when the service changes an account setting on its own (a webhook
 * switched off). One Query of the account's users with a filter: rare, so no
 * index of its own.
 */
export async function listAccountAdmins(accountId: string): Promise<UserRecord[]> {
  const filter = {
    expr: '#role IN (:owner, :admin) AND #status <> :suspended',
    names: { '#role': 'role', '#status': 'status' },
    values: { ':owner': 'owner', ':admin': 'admin', ':suspended': 'suspended' },
  };
  return (await queryAll<Record<string, unknown>>(users.query('byCreated', { accountId }, { filter }))).map(users.fromItem);
}

/** Count the users a list would return, up to `cap`. */
export async function countUsers(accountId: string, f: UserListFilter, cap: number): Promise<number> {
  const { forward: _f, ...q } = listQuery(accountId, f);
  return countMatches(q, cap);
}

/** Index a page of users written before the word index existed (admin reindex); see reindexContacts. */
export async function reindexUsers(accountId: string, limit: number, startKey?: Key): Promise<{ records: number; nextKey?: Key }> {
  const page = await queryPage<Record<string, unknown>>({ ...users.query('byCreated', { accountId }), limit, startKey });
  await Promise.all(
    page.items.map(users.fromItem).map((u) =>
      transactWrite([
        users.updateAttributes(u, { set: { searchText: searchText(wordsOf(u)) } }, conditions.version('version', u.version, changedConcurrently)),
        ...indexWrites('user', null, searchable(u)),
      ]).catch((err) => {
        if (!(err instanceof ConflictError)) throw err;
      }),
    ),
  );
  return { records: page.items.length, nextKey: page.nextKey };
}
