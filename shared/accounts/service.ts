import type { AuditActor, AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, SYSTEM_ACTOR, userActor } from '../audits/service.ts';
import { generateApiKey, hashApiKey } from '../auth/api-keys.ts';
import type { ApiKeyRecord } from '../auth/key-lookups.ts';
import { flushAuthorizerCache } from '../auth/authorizer-cache.ts';
import { signSessionToken } from '../auth/jwt.ts';
import type { Plan, Principal } from '../auth/principal.ts';
import { missingScopes, normalizeScopes, SCOPES, type Scope } from '../auth/scopes.ts';
import { retryOnConflict } from '../db/retry.ts';
import type { TxWrite } from '../db/transact.ts';
import { ForbiddenError, NotFoundError, UnauthorizedError, UnprocessableError, ValidationError } from '../domain/errors.ts';
import { createAnswerWrites, isRetryableConflict, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import { findUser } from '../users/api.ts';
import { newUserRecord, recordLogin, toUserDto, userAuditWrites } from '../users/service.ts';
import type { ApiKeyDto, CreateApiKeyBody } from './model.ts';
import * as repo from './repository.ts';
import type { AccountRecord } from './repository.ts';

/** Default lifetime of a session token issued by the admin CLI. */
export const DEFAULT_SESSION_TTL_SECONDS = 12 * 60 * 60;

/*
 * Audits (decisions §15). The admin CLI's operations (and `npm start`'s) are
 * the system's, an API call's are the calling user's (userActor); the via is
 * `api` (an operator's command has no via of its own). An account's audit
 * lists its name, its plan and the id of its API Gateway usage key, never the
 * key's value; an API key's lists its user, name, scopes and expiry (never the
 * key or its hash) and, on revocation, `revokedAt`. Its hourly last use is no
 * change of a setting and is not audited.
 */
const ACCOUNT_AUDITED = ['name', 'plan', 'usageKeyId'] as const;
const API_KEY_AUDITED = ['userId', 'name', 'scopes', 'expiresAt', 'revokedAt'] as const;

const accountAudit = (accountId: string, changes: AuditChange[], at: string): TxWrite =>
  auditWrite({ accountId, resource: { type: 'account', id: accountId }, actor: SYSTEM_ACTOR, via: 'api', changes, at });

const apiKeyAudit = (k: ApiKeyRecord, changes: AuditChange[], at: string, actor: AuditActor): TxWrite =>
  auditWrite({ accountId: k.accountId, resource: { type: 'api_key', id: k.keyId }, actor, via: 'api', changes, at });

/** An API key as its audit sees it: no key material. */
const auditedKey = (k: ApiKeyRecord, revokedAt: string | null = null) => ({ userId: k.userId, name: k.name, scopes: k.scopes, expiresAt: k.expiresAt, revokedAt });

/** What a new key may do and for how long: every scope and no expiry unless narrowed (decisions §18). */
export interface KeyLimits {
  scopes?: readonly Scope[];
  /** ISO 8601, validated by the caller (ExpiresAtSchema); null or absent: never. */
  expiresAt?: string | null;
}

function newApiKey(accountId: string, userId: string, name: string, limits: KeyLimits = {}) {
  const apiKey = generateApiKey();
  const record: ApiKeyRecord = {
    keyId: newId('key'),
    accountId,
    userId,
    name,
    hash: hashApiKey(apiKey),
    createdAt: new Date().toISOString(),
    scopes: normalizeScopes(limits.scopes ?? SCOPES),
    expiresAt: limits.expiresAt ?? null,
    lastUsedAt: null,
  };
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
  const account: AccountRecord = {
    accountId,
    name: input.name,
    plan: input.plan,
    createdAt: owner.createdAt,
    ...(input.usage ? { usageKeyId: input.usage.keyId, usageKeyValue: input.usage.keyValue } : {}),
  };
  // Three audits: the account, its owner, the owner's first key.
  await repo.createAccount(account, owner, record, [
    accountAudit(accountId, diffFields(null, account, ACCOUNT_AUDITED), account.createdAt),
    ...userAuditWrites(null, owner, SYSTEM_ACTOR),
    apiKeyAudit(record, diffFields(null, auditedKey(record), API_KEY_AUDITED), record.createdAt, SYSTEM_ACTOR),
  ]);
  const dto = toUserDto(owner);
  return { accountId, plan: input.plan, owner: { id: dto.id, email: dto.email, name: dto.name, role: dto.role, status: dto.status }, apiKey };
}

/**
 * Store a new key of `userId` (its user must exist: else `missingUser`), audited as `actor`'s; `related` (the
 * request's answer) commits with it.
 */
async function storeApiKey(
  accountId: string,
  userId: string,
  name: string,
  limits: KeyLimits,
  actor: AuditActor,
  missingUser: () => Error = () => new NotFoundError('User'),
  related: (stored: { apiKey: string; record: ApiKeyRecord }) => TxWrite[] = () => [],
) {
  const { apiKey, record } = newApiKey(accountId, userId, name, limits);
  // The key's lookup copies the user's role/status and the account's plan; a concurrent change of either is a conflict: re-read.
  await retryOnConflict(async () => {
    const [user, account] = await Promise.all([findUser(accountId, userId, true), repo.getAccount(accountId)]);
    if (!user || !account) throw missingUser();
    await repo.putApiKey(record, user, account, [apiKeyAudit(record, diffFields(null, auditedKey(record), API_KEY_AUDITED), record.createdAt, actor), ...related({ apiKey, record })]);
  }, isRetryableConflict);
  return { apiKey, record };
}

/** The admin CLI's create-api-key (decisions §2, §18): every scope and no expiry unless narrowed. */
export async function createApiKey(accountId: string, userId: string, name = 'API key', limits: KeyLimits = {}) {
  const { apiKey, record } = await storeApiKey(accountId, userId, name, limits, SYSTEM_ACTOR);
  return { id: record.keyId, name, apiKey, scopes: record.scopes, expiresAt: record.expiresAt };
}

/**
 * Revoke a key: its lookup is deleted (refused from the next request on) and
 * the stage's authorizer cache flushed, so no cached answer outlives it. A key
 * `visible` says no to (by default none) is not found. `actor`: the system
 * for the admin CLI, the calling user for the API.
 */
export async function revokeApiKey(accountId: string, keyId: string, actor: AuditActor = SYSTEM_ACTOR, visible: (key: ApiKeyRecord & { revokedAt: string | null }) => boolean = () => true) {
  await retryOnConflict(async () => {
    const key = await repo.getApiKey(accountId, keyId);
    if (!key || !visible(key)) throw new NotFoundError('API key');
    const at = new Date().toISOString();
    // Revoking a revoked key again repeats the writes (harmless) but records nothing: nothing changed.
    const audit = key.revokedAt ? [] : [apiKeyAudit(key, diffFields(auditedKey(key), auditedKey(key, at), API_KEY_AUDITED), at, actor)];
    await repo.revokeApiKey(key, await findUser(accountId, key.userId, true), at, audit);
  });
  await flushAuthorizerCache();
  return { id: keyId, revoked: true as const };
}

/*
 * The API keys of the user-management interface (decisions §18). Key
 * management needs the users:write scope; owners and admins manage every key
 * of the account, others their own.
 */

const isManager = (p: Principal) => p.role === 'owner' || p.role === 'admin';

function requireKeyManagement(p: Principal): void {
  const [missing] = missingScopes(p.scopes, ['users:write']);
  if (missing) throw new ForbiddenError(`This API key lacks the ${missing} scope; key management needs it`);
}

export function toApiKeyDto(k: ApiKeyRecord): ApiKeyDto {
  return { id: k.keyId, name: k.name, scopes: k.scopes, expires_at: k.expiresAt, created_at: k.createdAt, last_used_at: k.lastUsedAt, user_id: k.userId };
}

export type CreatedApiKey = ApiKeyDto & { key: string };

/**
 * POST /api-keys: a key for the caller, or (owners and admins) for another
 * user of the account. A call made with a key creates keys only within that
 * key's scopes and expires no later than that key (decisions §18: a leaked
 * short-lived key must not mint a permanent one). An admin cannot make a key
 * that acts as the owner: it would act with more than the admin's own role.
 */
export async function createApiKeyFor(p: Principal, body: CreateApiKeyBody, opts: CreateAnswer<CreatedApiKey> = {}): Promise<CreatedApiKey> {
  requireKeyManagement(p);
  const userId = body.user_id ?? p.userId;
  if (userId !== p.userId && !isManager(p)) {
    throw new ValidationError('Only owners and admins may create a key for another user', [{ field: 'user_id', message: 'owners and admins only; leave it out for a key of your own' }]);
  }
  const scopes = normalizeScopes(body.scopes ?? SCOPES);
  const beyond = missingScopes(p.scopes, scopes);
  if (beyond.length) throw new ForbiddenError(`An API key can create keys only within its own scopes; this key lacks ${beyond.join(', ')}`);
  const expiresAt = body.expires_at ?? null;
  if (p.keyExpiresAt && (expiresAt === null || Date.parse(expiresAt) > Date.parse(p.keyExpiresAt))) {
    throw new UnprocessableError(`A key made with an API key that expires cannot outlive it: expires_at must be at or before ${p.keyExpiresAt}`, [
      { field: 'expires_at', message: `required, at or before ${p.keyExpiresAt} (when the calling key expires)` },
    ]);
  }
  if (userId !== p.userId) {
    const target = await findUser(p.accountId, userId);
    if (target?.role === 'owner' && p.role !== 'owner') throw new ForbiddenError('Only the owner may create keys that act as the owner');
  }
  const noSuchUser = () => new ValidationError('No such user in the account', [{ field: 'user_id', message: 'no such user' }]);
  const created = ({ apiKey, record }: { apiKey: string; record: ApiKeyRecord }): CreatedApiKey => ({ ...toApiKeyDto(record), key: apiKey });
  // Its answer commits with it (docs/decisions.md "Ambiguous writes"): a retry with the key after a lost answer answers
  // this key (its secret left out, as every replay) instead of minting a second one the client never saw.
  return created(await storeApiKey(p.accountId, userId, body.name, { scopes, expiresAt }, userActor(p), noSuchUser, (stored) => createAnswerWrites(opts, created(stored))));
}

/** GET /api-keys: the live keys the caller may manage, newest first. */
export async function listApiKeysFor(p: Principal): Promise<ApiKeyDto[]> {
  requireKeyManagement(p);
  return (await repo.listLiveApiKeys(p.accountId, isManager(p) ? undefined : p.userId)).map(toApiKeyDto);
}

/** DELETE /api-keys/{id}: another user's key is not found unless the caller is an owner or admin; a revoked key is not found. */
export async function revokeApiKeyFor(p: Principal, keyId: string): Promise<void> {
  requireKeyManagement(p);
  await revokeApiKey(p.accountId, keyId, userActor(p), (key) => !key.revokedAt && (isManager(p) || key.userId === p.userId));
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
  await updateAccount(accountId, { plan });
  // The plan (the rate limit) is in the cached authorizer answer.
  await flushAuthorizerCache();
  return { accountId, plan };
}

/** An account's record (the admin CLI's set-plan on a deployed stack reads it before it makes a usage key). */
export const getAccount = (accountId: string) => repo.getAccount(accountId);

/**
 * Set plan or usage key (set-plan), with the account's audit in the same
 * transaction, checked against the values read so its `from` is what it
 * replaced. A set-plan that changes nothing writes the same values again
 * (bringing the key lookups in step, as ever) and records no audit.
 */
export async function updateAccount(accountId: string, changes: Partial<Pick<AccountRecord, 'plan' | 'usageKeyValue' | 'usageKeyId'>>): Promise<void> {
  await retryOnConflict(async () => {
    const current = await repo.getAccount(accountId);
    if (!current) throw new NotFoundError('Account');
    const audited = diffFields(current, { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) }, ACCOUNT_AUDITED);
    await repo.updateAccount(accountId, changes, audited.length ? [accountAudit(accountId, audited, new Date().toISOString())] : [], current);
  });
}

/** Every account's id, for operator jobs over all accounts (admin reindex --all). */
export const listAccountIds = () => repo.listAccountIds();
