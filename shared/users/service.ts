import { apiKeyLookupDeletes, apiKeyLookupWrites } from '../auth/key-lookups.ts';
import type { AuditActor } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import { flushAuthorizerCache } from '../auth/authorizer-cache.ts';
import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import type { TxWrite } from '../db/transact.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../domain/errors.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { createAnswerWrites, type CreateAnswer } from '../idempotency/service.ts';
import { tombstoneWrite } from '../exports/api.ts';
import { newId } from '../ids.ts';
import { USER_EVENT_SOURCE, USER_INVITED } from './events.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import type { CreateUserBody, ListUsersQuery, UpdateUserBody, UserDto } from './model.ts';
import * as repo from './repository.ts';
import type { UserListFilter, UserRecord } from './repository.ts';

/** total_count stops counting here (api-spec Limits). */
export const TOTAL_COUNT_CAP = 10_000;

export function toUserDto(u: UserRecord): UserDto {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    avatar_url: u.avatarUrl,
    role: u.role,
    status: u.status,
    created_at: u.createdAt,
    updated_at: u.updatedAt,
    last_login_at: u.lastLoginAt,
  };
}

const isManager = (p: Principal) => p.role === 'owner' || p.role === 'admin';

async function requireUser(accountId: string, userId: string): Promise<UserRecord> {
  const user = await repo.getUser(accountId, userId);
  if (!user) throw new NotFoundError('User');
  return user;
}

/** Users of the change index, as the incremental export answers them (GET's shape, snake_case). */
export const exportUsers = async (_accountId: string, items: Record<string, unknown>[]) =>
  items.map(repo.userFromItem).map((u) => ({ id: u.id, updatedAt: repo.userChangedAt(u), object: toUserDto(u) }));

/** What a user's audit lists (decisions §15): the settings an admin changes; never its key hashes, and not its logins. */
const AUDITED = ['email', 'name', 'role', 'status'] as const;

/**
 * The audit of a user created (`before` null) or changed, for the change's
 * own transaction: one write, or none when no audited field changed.
 */
export function userAuditWrites(before: UserRecord | null, after: UserRecord, actor: AuditActor): TxWrite[] {
  const changes = diffFields(before, after, AUDITED);
  if (before && !changes.length) return [];
  return [auditWrite({ accountId: after.accountId, resource: { type: 'user', id: after.id }, actor, via: 'api', changes, at: after.updatedAt })];
}

/** Build a new user record (not yet stored). */
export function newUserRecord(accountId: string, input: { email: string; name: string; role: UserRecord['role']; status: UserRecord['status'] }, now = new Date()): UserRecord {
  const at = now.toISOString();
  return { id: newId('usr', now.getTime()), accountId, ...input, avatarUrl: null, createdAt: at, updatedAt: at, lastLoginAt: null, version: 1 };
}

/**
 * When role or status changes, each of the user's key lookups gets the new
 * values in the same transaction, so the very next request with any of its
 * keys sees them (decisions §1). A lookup revoked meanwhile fails the
 * condition instead of coming back (revocation also bumps the version).
 */
function keyLookupWrites(current: UserRecord, changes: repo.UserChanges): TxWrite[] {
  const set: { role?: UserRecord['role']; status?: UserRecord['status'] } = {};
  if (changes.role !== undefined && changes.role !== current.role) set.role = changes.role;
  if (changes.status !== undefined && changes.status !== current.status) set.status = changes.status;
  return Object.keys(set).length ? apiKeyLookupWrites([...(current.apiKeyHashes ?? [])], set) : [];
}

/** Update a user (version-checked) with its key lookups. */
const updateWithKeys = (current: UserRecord, changes: repo.UserChanges) => repo.updateUser(current, changes, keyLookupWrites(current, changes));

/** A login (a session token issued): last_login_at is set and an invited user becomes active (decisions §1). */
export async function recordLogin(user: UserRecord, at: string): Promise<UserRecord> {
  return updateWithKeys(user, { lastLoginAt: at, ...(user.status === 'invited' ? { status: 'active' as const } : {}) });
}

export async function getMe(p: Principal) {
  return requireUser(p.accountId, p.userId);
}

export async function getUser(p: Principal, userId: string) {
  return requireUser(p.accountId, userId);
}

/**
 * Invite a user. Owners and admins may invite any role but owner; members may
 * invite members and viewers; viewers may not write (decisions §1).
 */
export async function createUser(p: Principal, body: CreateUserBody, opts: CreateAnswer<UserRecord> = {}): Promise<UserRecord> {
  if (p.role === 'viewer') throw new ForbiddenError('Viewers cannot create users');
  if (p.role === 'member' && body.role !== 'member' && body.role !== 'viewer') {
    throw new ForbiddenError('Members may only invite members or viewers');
  }
  const user = newUserRecord(p.accountId, { email: body.email, name: body.name, role: body.role, status: 'invited' });
  // The invitation is an event recorded with the user (outbox), so it is sent even if we crash right after.
  const invitation = body.send_invitation
    ? outboxWrites([newDomainEvent(p.accountId, USER_INVITED, { user: { id: user.id, email: user.email, name: user.name, role: user.role }, invitedBy: p.userId }, user.createdAt)], USER_EVENT_SOURCE)
    : [];
  // A commit whose answer is lost must not let the client's retry with its key answer 409 for the user's own email
  // (docs/decisions.md "Ambiguous writes"): the key holds the answer from the same transaction.
  await repo.createUser(user, [...invitation, ...userAuditWrites(null, user, userActor(p)), ...createAnswerWrites(opts, user)]);
  return user;
}

/** Update name, role or status, with the owner rules of decisions §1. */
export async function updateUser(p: Principal, userId: string, body: UpdateUserBody): Promise<UserRecord> {
  if (!isManager(p)) throw new ForbiddenError('Only owners and admins can update users');
  const target = await requireUser(p.accountId, userId);
  const now = new Date().toISOString();

  const changes: repo.UserChanges & { updatedAt: string } = { updatedAt: now };
  if (body.name !== undefined) changes.name = body.name;
  if (body.status !== undefined) changes.status = body.status;

  if (body.role === 'owner' && target.role !== 'owner') {
    if (p.role !== 'owner') throw new ForbiddenError('Only the owner can transfer ownership');
    if ((body.status ?? target.status) === 'suspended') throw new ConflictError('A suspended user cannot become the owner');
    const owner = await requireUser(p.accountId, p.userId);
    const targetChanges = { ...changes, role: 'owner' as const };
    // Two audits: the new owner's role (and whatever else the request changed), the former owner's step down to admin.
    const transferred = await repo.transferOwnership(owner, target, targetChanges, [
      ...keyLookupWrites(target, targetChanges),
      ...keyLookupWrites(owner, { role: 'admin' }),
      ...userAuditWrites(target, { ...target, ...targetChanges }, userActor(p)),
      ...userAuditWrites(owner, { ...owner, role: 'admin', updatedAt: now }, userActor(p)),
    ]);
    await flushAuthorizerCache();
    return transferred;
  }

  if (target.role === 'owner') {
    // decisions §1: the owner cannot be suspended (409), whoever asks, as it cannot be deleted (409).
    if (body.status === 'suspended') throw new ConflictError('The owner cannot be suspended');
    if (p.role !== 'owner') throw new ForbiddenError('Only the owner can change the owner');
    if (body.role !== undefined && body.role !== 'owner') throw new ConflictError('The owner cannot step down; transfer ownership to another user instead');
  } else if (body.role !== undefined) {
    changes.role = body.role;
  }

  if (Object.keys(changes).length === 1) return target;
  const updated = await repo.updateUser(target, changes, [...keyLookupWrites(target, changes), ...userAuditWrites(target, { ...target, ...changes }, userActor(p))]);
  // A cached authorizer answer carries the role and is refused only by status: the next request must see the change.
  if ((changes.role !== undefined && changes.role !== target.role) || (changes.status !== undefined && changes.status !== target.status)) await flushAuthorizerCache();
  return updated;
}

/** Delete a user permanently; never the owner. */
export async function deleteUser(p: Principal, userId: string): Promise<void> {
  if (!isManager(p)) throw new ForbiddenError('Only owners and admins can delete users');
  // The delete is version-checked (so a key created meanwhile goes with the user): a concurrent change means re-read and retry.
  await retryOnConflict(
    async () => {
      const target = await requireUser(p.accountId, userId);
      if (target.role === 'owner') throw new ConflictError('The owner cannot be deleted; transfer ownership first');
      // The user's keys stop working with it; its audit and its export tombstone go with it.
      const at = new Date().toISOString();
      await repo.deleteUser(target, [
        ...apiKeyLookupDeletes([...(target.apiKeyHashes ?? [])]),
        auditWrite({ accountId: p.accountId, resource: { type: 'user', id: target.id }, actor: userActor(p), via: 'api', changes: [], deleted: true, at }),
        tombstoneWrite('user', p.accountId, target.id, at),
      ]);
    },
    (err) => err instanceof repo.UserChangedError,
  );
  await flushAuthorizerCache();
}

const LIST = 'users';

/**
 * One page of users. The cursor carries the first query's filters and sort
 * and the total counted then, so later pages cost one Query.
 */
export async function listUsers(p: Principal, q: ListUsersQuery) {
  let filter: UserListFilter = { role: q.role, status: q.status, search: q.search, sort: q.sort, order: q.order };
  let startKey: Record<string, string> | undefined;
  let total: number | undefined;
  if (q.cursor) {
    const state = await decodeCursor<UserListFilter>(q.cursor, LIST, p.accountId);
    ({ query: filter, key: startKey, total } = state);
  }
  // A search answers its exact total with its page (one read of the word index); other lists count beside the page.
  const [page, counted] = await Promise.all([
    repo.listUsers(p.accountId, filter, q.limit, startKey),
    total ?? (filter.search ? undefined : repo.countUsers(p.accountId, filter, TOTAL_COUNT_CAP)),
  ]).then(async ([pg, c]) => [pg, c ?? pg.total ?? (await repo.countUsers(p.accountId, filter, TOTAL_COUNT_CAP))] as const);
  const nextCursor = page.nextKey ? await encodeCursor({ list: LIST, accountId: p.accountId, query: filter, key: page.nextKey, total: counted }) : null;
  return { users: page.items, nextCursor, totalCount: counted };
}
