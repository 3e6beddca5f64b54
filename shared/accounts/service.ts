import { generateApiKey, hashApiKey } from '../auth/api-keys.ts';
import { flushAuthorizerCache } from '../auth/authorizer-cache.ts';
import { signSessionToken } from '../auth/jwt.ts';
import type { Plan } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { NotFoundError, UnauthorizedError } from '../domain/errors.ts';
import { newId } from '../ids.ts';
import { findUser } from '../users/api.ts';
import { newUserRecord, recordLogin, toUserDto } from '../users/service.ts';
import * as repo from './repository.ts';

/** Default lifetime of a session token issued by the admin CLI. */
export const DEFAULT_SESSION_TTL_SECONDS = 12 * 60 * 60;

function newApiKey(accountId: string, userId: string, name: string) {
  const apiKey = generateApiKey();
  const record: repo.ApiKeyRecord = { keyId: newId('key'), accountId, userId, name, hash: hashApiKey(apiKey), createdAt: new Date().toISOString() };
  return { apiKey, record };
}

/**
 * Provision a tenant: account, active owner and the owner's first API key
 * (decisions §2). On a deployed stack the admin CLI passes the id and the API
 * Gateway usage key it already placed in the plan, so the account is written
 * with its key in the same transaction.
 */
export async function createAccount(input: { name: string; plan: Plan; ownerEmail: string; ownerName?: string; accountId?: string; usage?: { keyId: string; keyValue: string } }) {
  const accountId = input.accountId ?? newId('acct');
  const owner = newUserRecord(accountId, { email: input.ownerEmail, name: input.ownerName ?? input.ownerEmail.split('@')[0], role: 'owner', status: 'active' });
  const { apiKey, record } = newApiKey(accountId, owner.id, 'Owner key');
  await repo.createAccount(
    { accountId, name: input.name, plan: input.plan, createdAt: owner.createdAt, ...(input.usage ? { usageKeyId: input.usage.keyId, usageKeyValue: input.usage.keyValue } : {}) },
    owner,
    record,
  );
  const dto = toUserDto(owner);
  return { accountId, plan: input.plan, owner: { id: dto.id, email: dto.email, name: dto.name, role: dto.role, status: dto.status }, apiKey };
}

export async function createApiKey(accountId: string, userId: string, name = 'API key') {
  const { apiKey, record } = newApiKey(accountId, userId, name);
  // The key's lookup copies the user's role/status and the account's plan; a concurrent change of either is a conflict: re-read.
  await retryOnConflict(async () => {
    const [user, account] = await Promise.all([findUser(accountId, userId, true), repo.getAccount(accountId)]);
    if (!user || !account) throw new NotFoundError('User');
    await repo.putApiKey(record, user, account);
  });
  return { id: record.keyId, name, apiKey };
}

export async function revokeApiKey(accountId: string, keyId: string) {
  await retryOnConflict(async () => {
    const key = await repo.getApiKey(accountId, keyId);
    if (!key) throw new NotFoundError('API key');
    await repo.revokeApiKey(key, await findUser(accountId, key.userId, true));
  });
  await flushAuthorizerCache();
  return { id: keyId, revoked: true as const };
}

/**
 * Issue a session token. It counts as a login: last_login_at is set and an
 * invited user becomes active (decisions §1).
 */
export async function issueSessionToken(accountId: string, userId: string, ttlSeconds = DEFAULT_SESSION_TTL_SECONDS) {
  const user = await findUser(accountId, userId);
  if (!user) throw new NotFoundError('User');
  if (user.status === 'suspended') throw new UnauthorizedError('The user is suspended');
  await recordLogin(user, new Date().toISOString());
  return signSessionToken(accountId, userId, ttlSeconds);
}

export async function setPlan(accountId: string, plan: Plan) {
  await repo.updateAccount(accountId, { plan });
  // The plan (the rate limit) is in the cached authorizer answer.
  await flushAuthorizerCache();
  return { accountId, plan };
}

/** Every account's id, for operator jobs over all accounts (admin reindex --all). */
export const listAccountIds = () => repo.listAccountIds();
