import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Plan } from '../auth/principal.ts';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.ts';
import { putUserWrites, type UserRecord } from '../users/repository.ts';

export interface AccountRecord {
  accountId: string;
  name: string;
  plan: Plan;
  createdAt: string;
  /** Value of the account's API Gateway API key (deployed stacks): the authorizer's usageIdentifierKey. */
  usageKeyValue?: string;
  usageKeyId?: string;
}

export interface ApiKeyRecord {
  keyId: string;
  accountId: string;
  userId: string;
  name: string;
  hash: string;
  createdAt: string;
}

/** Most active API keys one user may hold: every role/status change rewrites each key's lookup in one transaction. */
export const MAX_KEYS_PER_USER = 20;

/**
 * What the authorizer needs, copied onto the key's hash lookup so that one
 * GetItem resolves a presented key. Kept in step in the same transactions
 * that change the user's role or status (users repository), delete the user,
 * revoke the key, or change the account's plan (updateAccount).
 */
export interface KeyPrincipal {
  role: UserRecord['role'];
  status: UserRecord['status'];
  plan: Plan;
  usageKeyValue?: string;
}

export type ApiKeyLookup = ApiKeyRecord & Partial<KeyPrincipal>;

/** The writes that store an API key: its global hash lookup (carrying the principal) and its record under the account. */
function putApiKeyWrites(k: ApiKeyRecord, principal: KeyPrincipal): TxWrite[] {
  return [
    { item: { Put: { TableName: tableName(), Item: { ...keys.apiKeyHash(k.hash), type: 'apiKeyHash', ...k, ...principal }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    { item: { Put: { TableName: tableName(), Item: { ...keys.apiKey(k.accountId, k.keyId), type: 'apiKey', ...k, revokedAt: null }, ConditionExpression: 'attribute_not_exists(pk)' } } },
  ];
}

/** Create an account with its owner, the owner guard and the owner's first API key, in one transaction. */
export async function createAccount(account: AccountRecord, owner: UserRecord, key: ApiKeyRecord): Promise<void> {
  await transactWrite([
    { item: { Put: { TableName: tableName(), Item: { ...keys.account(account.accountId), type: 'account', ...account }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    ...putUserWrites({ ...owner, apiKeyHashes: new Set([key.hash]) }),
    { item: { Put: { TableName: tableName(), Item: { ...keys.owner(account.accountId), type: 'owner', userId: owner.id } } } },
    ...putApiKeyWrites(key, { role: owner.role, status: owner.status, plan: account.plan }),
  ]);
}

export async function getAccount(accountId: string): Promise<AccountRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId), ConsistentRead: true }));
  return (out.Item as AccountRecord | undefined) ?? null;
}

/** Set account attributes (plan, usage key) on an existing account. */
export async function updateAccount(accountId: string, changes: Partial<Pick<AccountRecord, 'plan' | 'usageKeyValue' | 'usageKeyId'>>): Promise<void> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: `SET ${entries.map(([k]) => `#${k} = :${k}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.fromEntries(entries.map(([k]) => [`#${k}`, k])),
        ExpressionAttributeValues: Object.fromEntries(entries.map(([k, v]) => [`:${k}`, v])),
      }),
    );
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new NotFoundError('Account');
    throw err;
  }
  if (changes.plan !== undefined || changes.usageKeyValue !== undefined) await copyAccountToKeyLookups(accountId, { plan: changes.plan, usageKeyValue: changes.usageKeyValue });
}

/**
 * Copy plan and usage key onto every live key lookup of the account. Not one
 * transaction (an account may hold more keys than a transaction can); it runs
 * after the account item changed, and a key created concurrently checks the
 * account's plan in its own transaction, so no lookup keeps the old value
 * once this returns. An admin operation: its work grows with the key count.
 */
async function copyAccountToKeyLookups(accountId: string, values: Partial<Pick<KeyPrincipal, 'plan' | 'usageKeyValue'>>): Promise<void> {
  const entries = Object.entries(values).filter(([, v]) => v !== undefined);
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.accountPk(accountId), ':prefix': keys.apiKeyPrefix },
        ProjectionExpression: '#hash',
        ExpressionAttributeNames: { '#hash': 'hash' },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    await Promise.all(
      (page.Items ?? []).map(async (item) => {
        try {
          await ddb.send(
            new UpdateCommand({
              TableName: tableName(),
              Key: keys.apiKeyHash(item.hash as string),
              UpdateExpression: `SET ${entries.map(([k]) => `#${k} = :${k}`).join(', ')}`,
              // A revoked key's lookup is gone and must stay gone.
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: Object.fromEntries(entries.map(([k]) => [`#${k}`, k])),
              ExpressionAttributeValues: Object.fromEntries(entries.map(([k, v]) => [`:${k}`, v])),
            }),
          );
        } catch (err) {
          if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
        }
      }),
    );
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/**
 * Store a new key for `user` of `account` (both as just read). The user's
 * version and the account's plan are checked in the same transaction, so a
 * concurrent role, status or plan change either sees this key or makes this
 * write fail (ConflictError: re-read and retry).
 */
export async function putApiKey(k: ApiKeyRecord, user: UserRecord, account: AccountRecord): Promise<void> {
  await transactWrite([
    ...putApiKeyWrites(k, { role: user.role, status: user.status, plan: account.plan, ...(account.usageKeyValue ? { usageKeyValue: account.usageKeyValue } : {}) }),
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.user(user.accountId, user.id),
          UpdateExpression: 'ADD #hashes :hash SET #version = :next',
          ConditionExpression: '#version = :version AND (attribute_not_exists(#hashes) OR size(#hashes) < :max)',
          ExpressionAttributeNames: { '#hashes': 'apiKeyHashes', '#version': 'version' },
          ExpressionAttributeValues: { ':hash': new Set([k.hash]), ':version': user.version, ':next': user.version + 1, ':max': MAX_KEYS_PER_USER },
        },
      },
      onConditionFailed: () =>
        (user.apiKeyHashes?.size ?? 0) >= MAX_KEYS_PER_USER
          ? new ValidationError(`A user can hold at most ${MAX_KEYS_PER_USER} API keys; revoke one first`, [{ field: 'user', message: 'too many API keys' }])
          : new ConflictError('The user changed concurrently; retry'),
    },
    {
      item: {
        ConditionCheck: {
          TableName: tableName(),
          Key: keys.account(account.accountId),
          ConditionExpression: account.usageKeyValue ? '#plan = :plan AND #usage = :usage' : '#plan = :plan AND attribute_not_exists(#usage)',
          ExpressionAttributeNames: { '#plan': 'plan', '#usage': 'usageKeyValue' },
          ExpressionAttributeValues: { ':plan': account.plan, ...(account.usageKeyValue ? { ':usage': account.usageKeyValue } : {}) },
        },
      },
      onConditionFailed: () => new ConflictError('The account changed concurrently; retry'),
    },
  ]);
}

/** Resolve a presented key by its hash: the authorizer's one read. */
export async function getApiKeyByHash(hash: string): Promise<ApiKeyLookup | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.apiKeyHash(hash) }));
  return (out.Item as ApiKeyLookup | undefined) ?? null;
}

export async function getApiKey(accountId: string, keyId: string): Promise<(ApiKeyRecord & { revokedAt: string | null }) | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.apiKey(accountId, keyId), ConsistentRead: true }));
  return (out.Item as (ApiKeyRecord & { revokedAt: string | null }) | undefined) ?? null;
}

/**
 * Revoke: drop the hash lookup (so the key stops working), mark the record,
 * and take the hash off its user (version-checked, so a concurrent role
 * change cannot write the lookup back), atomically. `user` is null when the
 * user is gone (its lookups went with it).
 */
export async function revokeApiKey(k: ApiKeyRecord, user: UserRecord | null): Promise<void> {
  await transactWrite([
    { item: { Delete: { TableName: tableName(), Key: keys.apiKeyHash(k.hash) } } },
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.apiKey(k.accountId, k.keyId),
          UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
          ExpressionAttributeValues: { ':now': new Date().toISOString() },
        },
      },
    },
    ...(user
      ? [
          {
            item: {
              Update: {
                TableName: tableName(),
                Key: keys.user(user.accountId, user.id),
                UpdateExpression: 'DELETE #hashes :hash SET #version = :next',
                ConditionExpression: '#version = :version',
                ExpressionAttributeNames: { '#hashes': 'apiKeyHashes', '#version': 'version' },
                ExpressionAttributeValues: { ':hash': new Set([k.hash]), ':version': user.version, ':next': user.version + 1 },
              },
            },
            onConditionFailed: () => new ConflictError('The user changed concurrently; retry'),
          },
        ]
      : []),
  ]);
}

/** The demo account `npm start` provisioned on this store, if any. */
export async function getDemoMarker(): Promise<{ accountId: string; userId: string } | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.demoMarker() }));
  return (out.Item as { accountId: string; userId: string } | undefined) ?? null;
}

export async function putDemoMarker(accountId: string, userId: string): Promise<void> {
  await transactWrite([{ item: { Put: { TableName: tableName(), Item: { ...keys.demoMarker(), accountId, userId } } } }]);
}
