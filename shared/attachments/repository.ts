import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { batchGet } from '../db/query.ts';
import type { TxWrite } from '../db/transact.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';

/**
 * An upload item: pending (with a TTL, so a token never attached disappears
 * from the table) until one message attaches it; then the same item is the
 * attachment (no TTL), found by the attachment id, which shares its suffix.
 */
export interface UploadRecord {
  accountId: string;
  /** The id suffix shared by the token (upl_) and the attachment (att_). */
  id: string;
  name: string;
  size: number;
  contentType: string;
  state: 'pending' | 'attached';
  /** Where the client uploads the bytes (uploads/… prefix, expired by the bucket's lifecycle rule). */
  uploadKey: string;
  createdBy: string;
  createdAt: string;
  /** Epoch seconds after which the token cannot be attached (the table's TTL attribute while pending). */
  expiresAt?: number;
  /** Once attached: the message, its ticket and the attachment's own object (attachments/… prefix). */
  messageId?: string;
  ticketId?: string;
  objectKey?: string;
  attachedAt?: string;
}

const strip = ({ pk: _p, sk: _s, type: _t, ...rest }: Record<string, unknown>) => rest as unknown as UploadRecord;

export async function putUpload(u: UploadRecord): Promise<void> {
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...keys.upload(u.accountId, u.id), type: 'upload', ...u }, ConditionExpression: 'attribute_not_exists(pk)' }));
}

/** One upload or attachment by its id suffix (strongly consistent: a token used a moment ago reads as used). */
export async function getUpload(accountId: string, id: string): Promise<UploadRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.upload(accountId, id), ConsistentRead: true }));
  return out.Item ? strip(out.Item) : null;
}

/** Several uploads of one account by id suffix, in one BatchGetItem; missing ones are absent from the map. */
export async function getUploads(accountId: string, ids: readonly string[]): Promise<Map<string, UploadRecord>> {
  if (!ids.length) return new Map();
  const items = await batchGet(
    [...new Set(ids)].map((id) => keys.upload(accountId, id)),
    { consistent: true },
  );
  return new Map(items.map(strip).map((u) => [u.id, u]));
}

/**
 * The write that consumes a token in a message's transaction: only a pending,
 * unexpired upload of this account becomes this message's attachment, so of
 * two messages racing for one token exactly one commits.
 */
export function attachWrite(u: UploadRecord, at: { messageId: string; ticketId: string; objectKey: string; now: string }, onConditionFailed: () => Error): TxWrite {
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.upload(u.accountId, u.id),
        UpdateExpression: 'SET #state = :attached, messageId = :m, ticketId = :t, objectKey = :k, attachedAt = :at REMOVE #ttl',
        ConditionExpression: '#state = :pending AND #ttl > :nowSeconds',
        ExpressionAttributeNames: { '#state': 'state', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':attached': 'attached',
          ':pending': 'pending',
          ':m': at.messageId,
          ':t': at.ticketId,
          ':k': at.objectKey,
          ':at': at.now,
          ':nowSeconds': Math.floor(Date.parse(at.now) / 1000),
        },
      },
    },
    onConditionFailed,
  };
}
