import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { keyDefaults, keyLookupDelete, keyLookupPut, keyLookupUpdate, keyLookupUseWrite, API_KEY_FIELDS, API_KEY_RENAMES, type ApiKeyRecord, type KeyPrincipal } from '../auth/key-lookups.ts';
import type { Plan } from '../auth/principal.ts';
import { ddb, tableName } from '../db/client.ts';
import { bindEntity, conditions, type Condition, type QueryOptions } from '../db/entity.ts';
import { accountEntities } from '../db/entities/accounts.ts';
import { batchGet, queryAll } from '../db/query.ts';
import { transactWrite, writeNow, type TxWrite } from '../db/transact.ts';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.ts';
import { addApiKeyHashWrite, createOwnerWrites, removeApiKeyHashWrite, userFromItem, userKey, type UserRecord } from '../users/api.ts';

export interface AccountRecord {
  accountId: string;
  name: string;
  plan: Plan;
  createdAt: string;
  /** Value of the account's API Gateway API key (deployed stacks): the authorizer's usageIdentifierKey. */
  usageKeyValue?: string;
  usageKeyId?: string;
}

/** Most active API keys one user may hold: every role/status change rewrites each key's lookup in one transaction. */
export const MAX_KEYS_PER_USER = 20;

/** Attributes an item may lack are undefined on the record, as they were before it was read. */
const withoutNulls = <R extends object>(r: R): R => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)) as R;

const accounts = bindEntity<AccountRecord>(accountEntities.account, { fields: ['accountId', 'name', 'plan', 'createdAt', 'usageKeyValue', 'usageKeyId'], normalize: withoutNulls });
const apiKeys = bindEntity<ApiKeyRecord & { revokedAt: string | null }>(accountEntities.apiKey, { fields: [...API_KEY_FIELDS, 'revokedAt'], renames: API_KEY_RENAMES, normalize: keyDefaults });
const demoMarkers = bindEntity<{ accountId: string; userId: string }>(accountEntities.demoMarker, { fields: ['accountId', 'userId'] });

/** The writes that store an API key: its global hash lookup (carrying the principal) and its record under the account. */
function putApiKeyWrites(k: ApiKeyRecord, principal: KeyPrincipal): TxWrite[] {
  return [keyLookupPut(k, principal), apiKeys.put({ ...k, revokedAt: null }, conditions.absent())];
}

/** Create an account with its owner, the owner guard and the owner's first API key, in one transaction; `related` (its audits) commits with it. */
export async function createAccount(account: AccountRecord, owner: UserRecord, key: ApiKeyRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    accounts.put(account, conditions.absent()),
    ...createOwnerWrites({ ...owner, apiKeyHashes: new Set([key.hash]) }),
    // The owner's first key carries the account's usage key too, as every later key does (putApiKey).
    ...putApiKeyWrites(key, { role: owner.role, status: owner.status, plan: account.plan, ...(account.usageKeyValue ? { usageKeyValue: account.usageKeyValue } : {}) }),
    ...related,
  ]);
}

export async function getAccount(accountId: string): Promise<AccountRecord | null> {
  return accounts.get({ accountId }, { consistent: true });
}

/** A user and its account's record in one round trip (the authorizer's read for session tokens). */
export async function getUserAndAccount(accountId: string, userId: string): Promise<{ user: UserRecord | null; account: AccountRecord | null }> {
  const uKey = userKey(accountId, userId);
  const aKey = accounts.key({ accountId });
  const items = await batchGet([uKey, aKey]);
  const user = items.find((i) => i.sk === uKey.sk);
  const account = items.find((i) => i.sk === aKey.sk);
  return { user: user ? userFromItem(user) : null, account: account ? accounts.fromItem(account) : null };
}

/**
 * Set account attributes (plan, usage key) on an existing account; with
 * `readAs`, only if its plan and usage key are still those (else a
 * ConflictError: re-read). `related` (its audit) commits with it.
 */
export async function updateAccount(
  accountId: string,
  changes: Partial<Pick<AccountRecord, 'plan' | 'usageKeyValue' | 'usageKeyId'>>,
  related: TxWrite[] = [],
  readAs?: Pick<AccountRecord, 'plan' | 'usageKeyId'>,
): Promise<void> {
  const condition: Condition = readAs
    ? {
        expr: readAs.usageKeyId ? 'attribute_exists(pk) AND #plan = :plan AND #usage = :usage' : 'attribute_exists(pk) AND #plan = :plan AND attribute_not_exists(#usage)',
        names: { '#plan': 'plan', '#usage': 'usageKeyId' },
        values: { ':plan': readAs.plan, ...(readAs.usageKeyId ? { ':usage': readAs.usageKeyId } : {}) },
        error: () => new ConflictError('The account changed concurrently; retry'),
      }
    : conditions.present(() => new NotFoundError('Account'));
  const update = accounts.updateAttributes({ accountId }, { set: withoutUndefined(changes) }, condition);
  // Alone, a conditional update costs half a transaction's capacity.
  if (related.length) await transactWrite([update, ...related]);
  else await writeNow(update);
  if (changes.plan !== undefined || changes.usageKeyValue !== undefined) await copyAccountToKeyLookups(accountId, { plan: changes.plan, usageKeyValue: changes.usageKeyValue });
}

const withoutUndefined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** A revoked key's lookup is gone and must stay gone. */
class LookupGoneError extends Error {}

/**
 * Copy plan and usage key onto every live key lookup of the account. Not one
 * transaction (an account may hold more keys than a transaction can); it runs
 * after the account item changed, and a key created concurrently checks the
 * account's plan in its own transaction, so no lookup keeps the old value
 * once this returns (the records are read consistently). An admin operation:
 * its work grows with the key count.
 */
async function copyAccountToKeyLookups(accountId: string, values: Partial<Pick<KeyPrincipal, 'plan' | 'usageKeyValue'>>): Promise<void> {
  const q = apiKeys.query('byAccount', { accountId });
  const records = await queryAll<{ hash: string }>({ ...q, names: { ...q.names, '#hash': 'hash' }, projection: '#hash', consistent: true });
  await Promise.all(
    records.map(async ({ hash }) => {
      try {
        await writeNow(keyLookupUpdate(hash, values, () => new LookupGoneError()));
      } catch (err) {
        if (!(err instanceof LookupGoneError)) throw err;
      }
    }),
  );
}

/**
 * Store a new key for `user` of `account` (both as just read). The user's
 * version and the account's plan are checked in the same transaction, so a
 * concurrent role, status or plan change either sees this key or makes this
 * write fail (ConflictError: re-read and retry).
 */
export async function putApiKey(k: ApiKeyRecord, user: UserRecord, account: AccountRecord, related: TxWrite[] = []): Promise<void> {
  const accountUnchanged: Condition = {
    expr: account.usageKeyValue ? '#plan = :plan AND #usage = :usage' : '#plan = :plan AND attribute_not_exists(#usage)',
    names: { '#plan': 'plan', '#usage': 'usageKeyValue' },
    values: { ':plan': account.plan, ...(account.usageKeyValue ? { ':usage': account.usageKeyValue } : {}) },
    error: () => new ConflictError('The account changed concurrently; retry'),
  };
  await transactWrite([
    ...putApiKeyWrites(k, { role: user.role, status: user.status, plan: account.plan, ...(account.usageKeyValue ? { usageKeyValue: account.usageKeyValue } : {}) }),
    addApiKeyHashWrite(user, k.hash, MAX_KEYS_PER_USER, () =>
      (user.apiKeyHashes?.size ?? 0) >= MAX_KEYS_PER_USER
        ? new ValidationError(`A user can hold at most ${MAX_KEYS_PER_USER} API keys; revoke one first`, [{ field: 'user_id', message: 'too many API keys' }])
        : new ConflictError('The user changed concurrently; retry'),
    ),
    accounts.check({ accountId: account.accountId }, accountUnchanged),
    ...related,
  ]);
}

export async function getApiKey(accountId: string, keyId: string): Promise<(ApiKeyRecord & { revokedAt: string | null }) | null> {
  return apiKeys.get({ accountId, keyId }, { consistent: true });
}

/**
 * The account's live (not revoked) API keys, newest first (ids are time-ordered),
 * or only those of `userId`. Reads the account's key records, revoked ones
 * included (filtered out by the store): an account holds at most 20 live keys
 * per user, and a key management list, not a request path of integrations.
 */
export async function listLiveApiKeys(accountId: string, userId?: string): Promise<ApiKeyRecord[]> {
  const filter: QueryOptions['filter'] = {
    expr: `(attribute_not_exists(#revoked) OR attribute_type(#revoked, :null))${userId ? ' AND #user = :user' : ''}`,
    names: { '#revoked': 'revokedAt', ...(userId ? { '#user': 'userId' } : {}) },
    values: { ':null': 'NULL', ...(userId ? { ':user': userId } : {}) },
  };
  const items = await queryAll<Record<string, unknown>>({ ...apiKeys.query('byAccount', { accountId }, { forward: false, filter }), consistent: true });
  return items.map((i) => apiKeys.fromItem(i));
}

/**
 * Record that a key was used at `at`, at most once per key per hour: one
 * transaction sets `lastUsedAt` on the key's lookup, only while the lookup's
 * own is older than `hourStart` (so of concurrent authorizers one writes), and
 * on its record. A revoked key (its lookup gone) writes nothing. A failed
 * condition is a ConflictError: someone recorded this hour already.
 */
export async function recordApiKeyUse(k: Pick<ApiKeyRecord, 'hash' | 'accountId' | 'keyId'>, at: string, hourStart: string): Promise<void> {
  await transactWrite([
    keyLookupUseWrite(k.hash, at, hourStart),
    apiKeys.updateAttributes(
      { accountId: k.accountId, keyId: k.keyId },
      { set: { lastUsedAt: at } },
      conditions.present(() => new NotFoundError('API key')),
    ),
  ]);
}

/**
 * Revoke: drop the hash lookup (so the key stops working), mark the record
 * (`revokedAt`, unless it was revoked already), and take the hash off its user
 * (version-checked, so a concurrent role change cannot write the lookup
 * back), atomically. `user` is null when the user is gone (its lookups went
 * with it). A key read as live must still be live (else a ConflictError:
 * re-read), so exactly one revocation is the first. `related` (its audit)
 * commits with it.
 */
export async function revokeApiKey(k: ApiKeyRecord & { revokedAt: string | null }, user: UserRecord | null, at = new Date().toISOString(), related: TxWrite[] = []): Promise<void> {
  const stillLive: Condition | undefined = k.revokedAt
    ? undefined
    : {
        expr: 'attribute_not_exists(#r) OR attribute_type(#r, :null)',
        names: { '#r': 'revokedAt' },
        values: { ':null': 'NULL' },
        error: () => new ConflictError('The API key was revoked concurrently'),
      };
  await transactWrite([
    keyLookupDelete(k.hash),
    // The record is written with revokedAt null, which if_not_exists would keep: the first revocation sets it, a repeat keeps it.
    apiKeys.updateAttributes(k, { set: { revokedAt: k.revokedAt ?? at } }, stillLive),
    ...(user ? [removeApiKeyHashWrite(user, k.hash, () => new ConflictError('The user changed concurrently; retry'))] : []),
    ...related,
  ]);
}

/** The demo account `npm start` provisioned on this store, if any. */
export async function getDemoMarker(): Promise<{ accountId: string; userId: string } | null> {
  return demoMarkers.get({});
}

export async function putDemoMarker(accountId: string, userId: string): Promise<void> {
  await writeNow(demoMarkers.put({ accountId, userId }));
}

/**
 * Every account's id (admin reindex --all): a Scan of the table for account
 * items, keys only. An operator's one-off walk of the whole table, never on a
 * request path.
 */
export async function listAccountIds(): Promise<string[]> {
  const ids: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await ddb.send(
      new ScanCommand({ TableName: tableName(), FilterExpression: 'sk = :account', ExpressionAttributeValues: { ':account': 'ACCOUNT' }, ProjectionExpression: 'pk', ExclusiveStartKey: startKey }),
    );
    for (const i of out.Items ?? []) ids.push(String(i.pk).slice('A#'.length));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return ids;
}
