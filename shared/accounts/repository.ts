import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Plan } from '../auth/principal.ts';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { NotFoundError } from '../domain/errors.ts';
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

/** The writes that store an API key: its global hash lookup and its record under the account. */
function putApiKeyWrites(k: ApiKeyRecord): TxWrite[] {
  return [
    { item: { Put: { TableName: tableName(), Item: { ...keys.apiKeyHash(k.hash), type: 'apiKeyHash', ...k }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    { item: { Put: { TableName: tableName(), Item: { ...keys.apiKey(k.accountId, k.keyId), type: 'apiKey', ...k, revokedAt: null }, ConditionExpression: 'attribute_not_exists(pk)' } } },
  ];
}

/** Create an account with its owner, the owner guard and the owner's first API key, in one transaction. */
export async function createAccount(account: AccountRecord, owner: UserRecord, key: ApiKeyRecord): Promise<void> {
  await transactWrite([
    { item: { Put: { TableName: tableName(), Item: { ...keys.account(account.accountId), type: 'account', ...account }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    ...putUserWrites(owner),
    { item: { Put: { TableName: tableName(), Item: { ...keys.owner(account.accountId), type: 'owner', userId: owner.id } } } },
    ...putApiKeyWrites(key),
  ]);
}

export async function getAccount(accountId: string): Promise<AccountRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId) }));
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
}

export async function putApiKey(k: ApiKeyRecord): Promise<void> {
  await transactWrite(putApiKeyWrites(k));
}

/** Resolve a presented key by its hash (the authorizer's first read). */
export async function getApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.apiKeyHash(hash) }));
  return (out.Item as ApiKeyRecord | undefined) ?? null;
}

/** Revoke: drop the hash lookup (so the key stops working) and mark the record, atomically. */
export async function revokeApiKey(accountId: string, keyId: string): Promise<void> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.apiKey(accountId, keyId) }));
  if (!out.Item) throw new NotFoundError('API key');
  await transactWrite([
    { item: { Delete: { TableName: tableName(), Key: keys.apiKeyHash(out.Item.hash as string) } } },
    {
      item: {
        Update: { TableName: tableName(), Key: keys.apiKey(accountId, keyId), UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)', ExpressionAttributeValues: { ':now': new Date().toISOString() } },
      },
    },
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
