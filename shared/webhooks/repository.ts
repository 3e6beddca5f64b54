import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { webhookEntities } from '../db/entities/webhooks.ts';
import { queryAll, queryPage } from '../db/query.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { transactWrite, writeNow, type TxWrite } from '../db/transact.ts';
import { ifNotExists } from '../db/update.ts';
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.ts';
import type { DisabledReason } from './events.ts';
import type { DeliveredEventType, DeliveryState, Webhook } from './model.ts';

export interface WebhookRecord extends Webhook {
  accountId: string;
  signingSecret: string;
  /** The secret the last rotation replaced: deliveries carry its signature too until 24 h after `signingSecretRotatedAt`. */
  previousSigningSecret: string | null;
  /** Events in a row that exhausted their retries with no success in between (decisions §18; the 10th switches the webhook off). */
  consecutiveFailures: number;
  version: number;
}

/** One event sent to one webhook. `body` is fixed at fan-out so every attempt (and redelivery) sends identical bytes. */
export interface DeliveryRecord {
  accountId: string;
  webhookId: string;
  deliveryId: string;
  eventId: string;
  eventType: DeliveredEventType;
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
  eventType: DeliveredEventType;
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

/** What an item stores beside a record: when it expires (the delivery log's TTL). */
type Expiring<R> = R & { expiresAt?: number };

const webhooks = bindEntity<WebhookRecord>(webhookEntities.webhook, {
  fields: [
    'id',
    'accountId',
    'name',
    'targetUrl',
    'events',
    'active',
    'disabledReason',
    'signingSecret',
    'previousSigningSecret',
    'signingSecretRotatedAt',
    'consecutiveFailures',
    'createdAt',
    'updatedAt',
    'version',
  ],
  // Webhooks written before rotation and the failing rule have none of their attributes (read back as null).
  normalize: (w) => ({ ...w, consecutiveFailures: w.consecutiveFailures ?? 0 }),
});
const webhookCounts = bindEntity<{ accountId: string; count: number }>(webhookEntities.webhookCount, { fields: ['count'] });
const deliveries = bindEntity<Expiring<DeliveryRecord>>(webhookEntities.webhookDelivery, {
  fields: ['accountId', 'webhookId', 'deliveryId', 'eventId', 'eventType', 'correlationId', 'body', 'state', 'attempts', 'tries', 'cycle', 'createdAt', 'updatedAt'],
  extra: (d) => ({ [TTL_ATTRIBUTE]: d.expiresAt }),
  // Deliveries recorded before the correlation id was kept have none.
  normalize: ({ correlationId, ...d }) => (correlationId ? { ...d, correlationId } : d) as Expiring<DeliveryRecord>,
});
const attempts = bindEntity<Expiring<AttemptRecord & { accountId: string; webhookId: string; attemptId: string }>>(webhookEntities.webhookAttempt, {
  fields: ['deliveryId', 'eventId', 'eventType', 'attempt', 'statusCode', 'error', 'durationMs', 'at', 'state', 'nextAttemptAt', 'correlationId'],
  extra: (a) => ({ webhookId: a.webhookId, [TTL_ATTRIBUTE]: a.expiresAt }),
});

/** The delivery is still live in this retry cycle (not finished, cancelled or redelivered). */
const liveInCycle = (cycle: number): Condition => ({
  expr: 'attribute_exists(pk) AND #cycle = :cycle AND #state IN (:pending, :retrying)',
  names: { '#cycle': 'cycle', '#state': 'state' },
  values: { ':cycle': cycle, ':pending': 'pending', ':retrying': 'retrying' },
});

const isConditionFailure = (err: unknown) => (err as Error).name === 'ConditionalCheckFailedException';

/** decisions §7: webhooks per account. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 100;

/** Create a webhook; the account's counter moves in the same transaction, so the cap holds under concurrent creates. `related` (its audit) commits with it. */
export async function putWebhook(w: WebhookRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    webhooks.put(w, conditions.absent()),
    webhookCounts.updateAttributes(
      { accountId: w.accountId },
      { set: { type: webhookEntities.webhookCount.type }, add: { count: 1 } },
      {
        expr: 'attribute_not_exists(#n) OR #n < :max',
        names: { '#n': 'count' },
        values: { ':max': MAX_WEBHOOKS_PER_ACCOUNT },
        error: () =>
          new ValidationError(`An account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks`, [
            { field: 'webhook', message: `at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account; delete one first` },
          ]),
      },
    ),
    ...related,
  ]);
}

export async function getWebhook(accountId: string, id: string, consistent = false): Promise<WebhookRecord | null> {
  return webhooks.get({ accountId, id }, { consistent });
}

/** Every webhook of an account, oldest first (ids are time-ordered). */
export async function listWebhooks(accountId: string): Promise<WebhookRecord[]> {
  return (await queryAll<Record<string, unknown>>(webhooks.query('byAccount', { accountId }))).map(webhooks.fromItem);
}

/** Replace a webhook if nobody changed it since it was read (optimistic lock on version); `related` (its audit) commits with it. */
export async function replaceWebhook(next: WebhookRecord, expectedVersion: number, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    webhooks.put(next, { expr: 'attribute_exists(pk) AND version = :v', values: { ':v': expectedVersion }, error: () => new ConflictError('The webhook was changed concurrently; retry the request') }),
    ...related,
  ]);
}

/** Delete a webhook and count it out; `related` (its audit) commits with it. */
export async function deleteWebhook(accountId: string, id: string, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    webhooks.delete(
      { accountId, id },
      conditions.present(() => new NotFoundError('Webhook')),
    ),
    // A counter missing (no create since it existed) is treated as 1, so the delete leaves 0 rather than failing.
    webhookCounts.updateAttributes({ accountId }, { set: { count: ifNotExists(1, -1) } }),
    ...related,
  ]);
}

/** The webhook changed since the delivery consumer read it: read it again and judge anew. */
export class WebhookChangedError extends Error {
  constructor() {
    super('the webhook changed since it was read');
    this.name = 'WebhookChangedError';
  }
}

/** What the failing rule changes on a webhook (decisions §18). */
export interface HealthChange {
  consecutiveFailures: number;
  /** Set when the rule switches the webhook off. */
  disabledReason?: DisabledReason;
}

/**
 * The write of a failing-rule verdict: the new count (and, when it disables,
 * `active: false` with its reason), only if the webhook is still at the
 * version the verdict was judged on. Concurrent deliveries each re-read and
 * re-judge on a WebhookChangedError, so no count is lost or counted twice.
 * The version moves, so an admin's PUT read before it is a 409, not a lost update.
 */
export function webhookHealthWrite(w: WebhookRecord, change: HealthChange, now: Date): TxWrite {
  const disabling = change.disabledReason ? { active: false, disabledReason: change.disabledReason, updatedAt: now.toISOString() } : {};
  return webhooks.updateAttributes(
    w,
    { set: { consecutiveFailures: change.consecutiveFailures, ...disabling }, add: { version: 1 } },
    { expr: 'attribute_exists(pk) AND version = :v', values: { ':v': w.version }, error: () => new WebhookChangedError() },
  );
}

/**
 * Record a new delivery for (webhook, event) unless one exists: its id comes
 * from the event's, so one conditional put is the guard. Returns the stored
 * delivery either way, so a fan-out retried after a crash finds the one it
 * created.
 */
export async function createDelivery(d: DeliveryRecord, now: Date): Promise<{ delivery: DeliveryRecord; created: boolean }> {
  try {
    await writeNow(deliveries.put({ ...d, expiresAt: expiresAt(now) }, conditions.absent()));
    return { delivery: d, created: true };
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
  }
  const existing = await getDelivery(d.accountId, d.webhookId, d.deliveryId);
  // Gone again between the two calls (its 30-day TTL): nothing left to deliver.
  return existing ? { delivery: existing, created: false } : { delivery: { ...d, state: 'cancelled' }, created: false };
}

export async function getDelivery(accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryRecord | null> {
  return deliveries.get({ accountId, webhookId, deliveryId }, { consistent: true });
}

/**
 * Count an attempt before making it, if the delivery is still live in this
 * cycle. Null when the message is stale (finished, cancelled or redelivered).
 */
export async function beginAttempt(d: Pick<DeliveryRecord, 'accountId' | 'webhookId' | 'deliveryId'>, cycle: number, now: Date): Promise<DeliveryRecord | null> {
  try {
    return deliveries.fromItem((await writeNow(deliveries.updateAttributes(d, { set: { updatedAt: now.toISOString() }, add: { attempts: 1, tries: 1 } }, liveInCycle(cycle)), { returnItem: true }))!);
  } catch (err) {
    if (isConditionFailure(err)) return null;
    throw err;
  }
}

/**
 * Write an attempt to the log and move the delivery to the attempt's outcome,
 * together; `related` (the failing rule's write on the webhook, with its
 * webhook.disabled event) commits with them. Both writes are idempotent, so
 * the whole can be sent again after a WebhookChangedError.
 */
export async function recordAttempt(d: DeliveryRecord, a: AttemptRecord, attemptId: string, now: Date, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    attempts.put({ ...a, accountId: d.accountId, webhookId: d.webhookId, attemptId, expiresAt: expiresAt(now) }),
    deliveries.updateAttributes(d, { set: { state: a.state, updatedAt: now.toISOString() } }, conditions.present()),
    ...related,
  ]);
}

/** A test delivery, already made: its delivery record (finished, never queued) and its one attempt in the log, together. */
export async function recordTestDelivery(d: DeliveryRecord, a: AttemptRecord, attemptId: string, now: Date): Promise<void> {
  await transactWrite([
    deliveries.put({ ...d, expiresAt: expiresAt(now) }, conditions.absent()),
    attempts.put({ ...a, accountId: d.accountId, webhookId: d.webhookId, attemptId, expiresAt: expiresAt(now) }),
  ]);
}

/** Mark a delivery that will not be attempted (its webhook was disabled or deleted). */
export async function cancelDelivery(d: Pick<DeliveryRecord, 'accountId' | 'webhookId' | 'deliveryId'>, now: Date): Promise<void> {
  const live: Condition = { expr: 'attribute_exists(pk) AND #state IN (:pending, :retrying)', names: { '#state': 'state' }, values: { ':pending': 'pending', ':retrying': 'retrying' } };
  try {
    await writeNow(deliveries.updateAttributes(d, { set: { state: 'cancelled', updatedAt: now.toISOString() } }, live));
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
  }
}

/** Start a new retry cycle for a finished delivery; a ConflictError while it is still live. */
export async function restartDelivery(d: DeliveryRecord, now: Date): Promise<DeliveryRecord> {
  const finished: Condition = {
    expr: 'attribute_exists(pk) AND #state IN (:succeeded, :failed, :cancelled)',
    names: { '#state': 'state' },
    values: { ':succeeded': 'succeeded', ':failed': 'failed', ':cancelled': 'cancelled' },
    error: () => new ConflictError('The delivery is still being attempted; redeliver it once it has finished'),
  };
  const restarted = await writeNow(
    deliveries.updateAttributes(d, { set: { state: 'pending', tries: 0, updatedAt: now.toISOString(), [TTL_ATTRIBUTE]: expiresAt(now) }, add: { cycle: 1 } }, finished),
    { returnItem: true },
  );
  return deliveries.fromItem(restarted!);
}

/** The delivery log of a webhook, newest attempt first. */
export async function listAttempts(accountId: string, webhookId: string, limit: number): Promise<AttemptRecord[]> {
  const skBeginsWith = attempts.key({ accountId, webhookId, attemptId: '' }).sk;
  const page = await queryPage<Record<string, unknown>>({ ...attempts.query('byWebhook', { accountId, webhookId }, { forward: false, skBeginsWith }), limit });
  return page.items.map(attempts.fromItem);
}
