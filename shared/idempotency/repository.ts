import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';

/** One Idempotency-Key of an account: in progress, or the first answer, kept for 24 hours. */
export interface IdempotencyRecord {
  fingerprint: string;
  state: 'running' | 'done';
  /** When the running request took the key (ms); a lock older than the function's time limit belongs to a dead request. */
  startedAt: number;
  status?: number;
  /** The first answer's body, gzip-compressed (a ticket answer can approach DynamoDB's 400 KB item limit). */
  body?: Uint8Array;
  /** Epoch seconds; DynamoDB's TTL removes the item, and reads treat it as gone from then on. */
  expiresAt: number;
}

/**
 * Take the key for a new request: succeeds when no live record exists, or the
 * record is a lock left by a request that can no longer be running.
 */
export async function claimKey(accountId: string, keyHash: string, fingerprint: string, now: number, ttlSeconds: number, staleLockMs: number): Promise<boolean> {
  try {
    await ddb.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.idempotencyKey(accountId, keyHash), type: 'idempotency', fingerprint, state: 'running', startedAt: now, [TTL_ATTRIBUTE]: Math.floor(now / 1000) + ttlSeconds },
        ConditionExpression: 'attribute_not_exists(pk) OR #exp < :nowSec OR (#state = :running AND startedAt < :stale AND fingerprint = :fp)',
        ExpressionAttributeNames: { '#exp': TTL_ATTRIBUTE, '#state': 'state' },
        ExpressionAttributeValues: { ':nowSec': Math.floor(now / 1000), ':running': 'running', ':stale': now - staleLockMs, ':fp': fingerprint },
      }),
    );
    return true;
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/** The live record of a key (strongly consistent: a replay must see the answer just recorded). */
export async function getKey(accountId: string, keyHash: string, now: number): Promise<IdempotencyRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.idempotencyKey(accountId, keyHash), ConsistentRead: true }));
  const item = out.Item;
  if (!item || Number(item[TTL_ATTRIBUTE]) < Math.floor(now / 1000)) return null;
  return { fingerprint: item.fingerprint, state: item.state, startedAt: item.startedAt, status: item.status, body: item.body, expiresAt: item[TTL_ATTRIBUTE] };
}

/** Record the first answer under the key the request holds. */
export async function completeKey(accountId: string, keyHash: string, fingerprint: string, status: number, body: Uint8Array | undefined): Promise<void> {
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.idempotencyKey(accountId, keyHash),
      UpdateExpression: body ? 'SET #state = :done, #status = :status, body = :body' : 'SET #state = :done, #status = :status',
      ConditionExpression: 'fingerprint = :fp',
      ExpressionAttributeNames: { '#state': 'state', '#status': 'status' },
      ExpressionAttributeValues: { ':done': 'done', ':status': status, ':fp': fingerprint, ...(body ? { ':body': body } : {}) },
    }),
  );
}

/** Let the key go after a failed request, so the client can retry with it. */
export async function releaseKey(accountId: string, keyHash: string, fingerprint: string): Promise<void> {
  await ddb
    .send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.idempotencyKey(accountId, keyHash),
        ConditionExpression: '#state = :running AND fingerprint = :fp',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':running': 'running', ':fp': fingerprint },
      }),
    )
    .catch((err: Error) => {
      if (err.name !== 'ConditionalCheckFailedException') throw err;
    });
}
