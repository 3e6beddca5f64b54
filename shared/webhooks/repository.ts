import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.ts';
import type { TicketEventType } from '../events/ticket-events.ts';
import type { DeliveryState, Webhook } from './model.ts';

export interface WebhookRecord extends Webhook {
  accountId: string;
  signingSecret: string;
  version: number;
}

/** One event sent to one webhook. `body` is fixed at fan-out so every attempt (and redelivery) sends identical bytes. */
export interface DeliveryRecord {
  accountId: string;
  webhookId: string;
  deliveryId: string;
  eventId: string;
  eventType: TicketEventType;
  /** The correlation id of the request that caused the event (absent on deliveries recorded before it was kept). */
  correlationId?: string;
  body: string;
  state: DeliveryState;
  /** Attempts over the delivery's life (the log's attempt number). */
  attempts: number;
  /** Attempts in the current retry cycle (a redelivery starts a new cycle): the position in the retry schedule. */
  tries: number;
  /** Bumped by each redelivery; a queue message of an older cycle is stale and dropped. */
  cycle: number;
  createdAt: string;
  updatedAt: string;
}

export interface AttemptRecord {
  deliveryId: string;
  eventId: string;
  eventType: TicketEventType;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  at: string;
  state: DeliveryState;
  nextAttemptAt: string | null;
  /** The correlation id the attempt ran under: its log lines carry the same one. */
  correlationId: string | null;
}

/** The delivery log is kept 30 days (TTL). */
export const LOG_RETENTION_SECONDS = 30 * 24 * 60 * 60;
const expiresAt = (now: Date) => Math.floor(now.getTime() / 1000) + LOG_RETENTION_SECONDS;

const WEBHOOK_FIELDS = ['id', 'accountId', 'name', 'targetUrl', 'events', 'active', 'signingSecret', 'createdAt', 'updatedAt', 'version'] as const;
const toWebhook = (i: Record<string, unknown>) => Object.fromEntries(WEBHOOK_FIELDS.map((f) => [f, i[f]])) as unknown as WebhookRecord;

const DELIVERY_FIELDS = ['accountId', 'webhookId', 'deliveryId', 'eventId', 'eventType', 'correlationId', 'body', 'state', 'attempts', 'tries', 'cycle', 'createdAt', 'updatedAt'] as const;
const toDelivery = (i: Record<string, unknown>) => Object.fromEntries(DELIVERY_FIELDS.map((f) => [f, i[f]])) as unknown as DeliveryRecord;

const ATTEMPT_FIELDS = ['deliveryId', 'eventId', 'eventType', 'attempt', 'statusCode', 'error', 'durationMs', 'at', 'state', 'nextAttemptAt', 'correlationId'] as const;
const toAttempt = (i: Record<string, unknown>) => Object.fromEntries(ATTEMPT_FIELDS.map((f) => [f, i[f] ?? null])) as unknown as AttemptRecord;

/** decisions §7: webhooks per account. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 100;

/** Create a webhook; the account's counter moves in the same transaction, so the cap holds under concurrent creates. */
export async function putWebhook(w: WebhookRecord): Promise<void> {
  await transactWrite([
    { item: { Put: { TableName: tableName(), Item: { ...keys.webhook(w.accountId, w.id), type: 'webhook', ...w }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.webhookCount(w.accountId),
          UpdateExpression: 'SET #type = :counter ADD #n :one',
          ConditionExpression: 'attribute_not_exists(#n) OR #n < :max',
          ExpressionAttributeNames: { '#n': 'count', '#type': 'type' },
          ExpressionAttributeValues: { ':one': 1, ':max': MAX_WEBHOOKS_PER_ACCOUNT, ':counter': 'counter' },
        },
      },
      onConditionFailed: () =>
        new ValidationError(`An account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks`, [
          { field: 'webhook', message: `at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account; delete one first` },
        ]),
    },
  ]);
}

export async function getWebhook(accountId: string, id: string, consistent = false): Promise<WebhookRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.webhook(accountId, id), ConsistentRead: consistent }));
  return out.Item ? toWebhook(out.Item) : null;
}

/** Every webhook of an account, oldest first (ids are time-ordered). */
export async function listWebhooks(accountId: string): Promise<WebhookRecord[]> {
  const items = await queryAll<Record<string, unknown>>({
    keyCondition: 'pk = :pk AND begins_with(sk, :prefix)',
    names: {},
    values: { ':pk': keys.accountPk(accountId), ':prefix': keys.webhookPrefix },
    forward: true,
  });
  return items.map(toWebhook);
}

/** Replace a webhook if nobody changed it since it was read (optimistic lock on version). */
export async function replaceWebhook(next: WebhookRecord, expectedVersion: number): Promise<void> {
  await transactWrite([
    {
      item: {
        Put: {
          TableName: tableName(),
          Item: { ...keys.webhook(next.accountId, next.id), type: 'webhook', ...next },
          ConditionExpression: 'attribute_exists(pk) AND version = :v',
          ExpressionAttributeValues: { ':v': expectedVersion },
        },
      },
      onConditionFailed: () => new ConflictError('The webhook was changed concurrently; retry the request'),
    },
  ]);
}

export async function deleteWebhook(accountId: string, id: string): Promise<void> {
  await transactWrite([
    { item: { Delete: { TableName: tableName(), Key: keys.webhook(accountId, id), ConditionExpression: 'attribute_exists(pk)' } }, onConditionFailed: () => new NotFoundError('Webhook') },
    // A counter missing (no create since it existed) is treated as 1, so the delete leaves 0 rather than failing.
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.webhookCount(accountId),
          UpdateExpression: 'SET #n = if_not_exists(#n, :one) - :one',
          ExpressionAttributeNames: { '#n': 'count' },
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    },
  ]);
}

/** A 410 from the target: switch the webhook off (a no-op if it was deleted meanwhile). */
export async function deactivateWebhook(accountId: string, id: string, now: Date): Promise<void> {
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhook(accountId, id),
        UpdateExpression: 'SET active = :f, updatedAt = :now ADD version :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':f': false, ':now': now.toISOString(), ':one': 1 },
      }),
    );
  } catch (err) {
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
  }
}

/**
 * Record a new delivery for (webhook, event) unless one exists: its id comes
 * from the event's, so one conditional put is the guard. Returns the stored
 * delivery either way, so a fan-out retried after a crash finds the one it
 * created.
 */
export async function createDelivery(d: DeliveryRecord, now: Date): Promise<{ delivery: DeliveryRecord; created: boolean }> {
  try {
    await ddb.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.webhookDelivery(d.accountId, d.webhookId, d.deliveryId), type: 'webhookDelivery', ...d, [TTL_ATTRIBUTE]: expiresAt(now) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return { delivery: d, created: true };
  } catch (err) {
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
  }
  const existing = await getDelivery(d.accountId, d.webhookId, d.deliveryId);
  // Gone again between the two calls (its 30-day TTL): nothing left to deliver.
  return existing ? { delivery: existing, created: false } : { delivery: { ...d, state: 'cancelled' }, created: false };
}

export async function getDelivery(accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.webhookDelivery(accountId, webhookId, deliveryId), ConsistentRead: true }));
  return out.Item ? toDelivery(out.Item) : null;
}

/**
 * Count an attempt before making it, if the delivery is still live in this
 * cycle. Null when the message is stale (finished, cancelled or redelivered).
 */
export async function beginAttempt(d: Pick<DeliveryRecord, 'accountId' | 'webhookId' | 'deliveryId'>, cycle: number, now: Date): Promise<DeliveryRecord | null> {
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhookDelivery(d.accountId, d.webhookId, d.deliveryId),
        UpdateExpression: 'SET updatedAt = :now ADD attempts :one, tries :one',
        ConditionExpression: 'attribute_exists(pk) AND #cycle = :cycle AND #state IN (:pending, :retrying)',
        ExpressionAttributeNames: { '#cycle': 'cycle', '#state': 'state' },
        ExpressionAttributeValues: { ':now': now.toISOString(), ':one': 1, ':cycle': cycle, ':pending': 'pending', ':retrying': 'retrying' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toDelivery(out.Attributes!);
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return null;
    throw err;
  }
}

/** Write an attempt to the log and move the delivery to the attempt's outcome, together. */
export async function recordAttempt(d: DeliveryRecord, a: AttemptRecord, attemptId: string, now: Date): Promise<void> {
  const writes: TxWrite[] = [
    {
      item: {
        Put: { TableName: tableName(), Item: { ...keys.webhookAttempt(d.accountId, d.webhookId, attemptId), type: 'webhookAttempt', webhookId: d.webhookId, ...a, [TTL_ATTRIBUTE]: expiresAt(now) } },
      },
    },
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.webhookDelivery(d.accountId, d.webhookId, d.deliveryId),
          UpdateExpression: 'SET #state = :state, updatedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':state': a.state, ':now': now.toISOString() },
        },
      },
    },
  ];
  await transactWrite(writes);
}

/** Mark a delivery that will not be attempted (its webhook was disabled or deleted). */
export async function cancelDelivery(d: Pick<DeliveryRecord, 'accountId' | 'webhookId' | 'deliveryId'>, now: Date): Promise<void> {
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhookDelivery(d.accountId, d.webhookId, d.deliveryId),
        UpdateExpression: 'SET #state = :cancelled, updatedAt = :now',
        ConditionExpression: 'attribute_exists(pk) AND #state IN (:pending, :retrying)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':cancelled': 'cancelled', ':now': now.toISOString(), ':pending': 'pending', ':retrying': 'retrying' },
      }),
    );
  } catch (err) {
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
  }
}

/** Start a new retry cycle for a finished delivery; a ConflictError while it is still live. */
export async function restartDelivery(d: DeliveryRecord, now: Date): Promise<DeliveryRecord> {
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhookDelivery(d.accountId, d.webhookId, d.deliveryId),
        UpdateExpression: 'SET #state = :pending, tries = :zero, updatedAt = :now, #ttl = :ttl ADD #cycle :one',
        ConditionExpression: 'attribute_exists(pk) AND #state IN (:succeeded, :failed, :cancelled)',
        ExpressionAttributeNames: { '#state': 'state', '#cycle': 'cycle', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':zero': 0,
          ':now': now.toISOString(),
          ':ttl': expiresAt(now),
          ':one': 1,
          ':succeeded': 'succeeded',
          ':failed': 'failed',
          ':cancelled': 'cancelled',
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toDelivery(out.Attributes!);
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new ConflictError('The delivery is still being attempted; redeliver it once it has finished');
    throw err;
  }
}

/** The delivery log of a webhook, newest attempt first. */
export async function listAttempts(accountId: string, webhookId: string, limit: number): Promise<AttemptRecord[]> {
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.accountPk(accountId), ':prefix': keys.webhookAttemptPrefix(webhookId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(toAttempt);
}
