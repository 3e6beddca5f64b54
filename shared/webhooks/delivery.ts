import type { TxWrite } from '../db/transact.ts';
import type { BatchMemo } from '../events/consumer.ts';
import { METRICS } from '../metrics.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { sendMessage } from '../events/sqs.ts';
import type { TicketEventPayload } from '../tickets/event-payloads.ts';
import type { TicketEventDetail } from '../tickets/events.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { currentCorrelationId, recordMetric } from '../observability.ts';
import { healthChanged, isSuccess, judgeAttempt, judgeEventEnd, parseRetryAfter, type EventEnd, type Outcome } from './delivery-rules.ts';
import { WEBHOOK_DISABLED, WEBHOOK_EVENT_SOURCE, WEBHOOK_TEST, type WebhookDisabledData, type WebhookTestEvent } from './events.ts';
import type { TestDelivery } from './model.ts';
import * as repo from './repository.ts';
import type { AttemptRecord, DeliveryRecord, WebhookRecord } from './repository.ts';
import { liveSecrets, signedHeaders } from './signing.ts';
import { postToTarget, type TargetPolicy } from './target.ts';

export { MAX_ATTEMPTS, parseRetryAfter, retryDelaySeconds, RETRY_DELAYS_SECONDS, type Outcome } from './delivery-rules.ts';

/** decisions §7: a delivery succeeds on a 2xx within 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** What the delivery queue carries: a pointer to the delivery record (the body lives there, fixed at fan-out). */
export interface DeliveryMessage {
  accountId: string;
  webhookId: string;
  deliveryId: string;
  cycle: number;
  /** The request that caused the attempt (the event's, or a redeliver call's): the consumer logs under it and the log stores it. */
  correlationId?: string;
}

export interface DeliveryConfig {
  queueUrl: string;
  /** Where a delivery goes after its last attempt (decisions §7: nothing dropped silently). */
  dlqUrl: string;
  /** Multiplies every delay (tests run the schedule in milliseconds). */
  retryScale: number;
  policy: TargetPolicy;
}

async function enqueue(queueUrl: string, d: DeliveryRecord, correlationId = d.correlationId): Promise<void> {
  const message: DeliveryMessage = { accountId: d.accountId, webhookId: d.webhookId, deliveryId: d.deliveryId, cycle: d.cycle, ...(correlationId ? { correlationId } : {}) };
  // The account as the message group: on a standard queue that makes it an SQS fair queue, so a tenant with a
  // backlog of deliveries does not hold up another tenant's (the local emulator ignores it; docs/events.md).
  await sendMessage({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message), MessageGroupId: d.accountId });
}

const subscribed = (w: WebhookRecord, event: string) => w.active && (w.events as string[]).includes(event);

/**
 * A delivery's id follows from its event's (one delivery per webhook and
 * event): a fan-out retried after a crash addresses the delivery it created
 * before, with no guard item and no lookup.
 */
export const deliveryIdFor = (eventId: string): string => `dlv_${eventId.slice(eventId.indexOf('_') + 1)}`;

export interface FanOutOptions {
  /** Reads shared by the events of one batch (the account's webhooks are listed once per batch, not per event). */
  batch?: BatchMemo;
  now?: Date;
}

/** The webhook body of a detail: exactly the payload of api-spec "Events". */
const webhookBody = (d: TicketEventDetail): TicketEventPayload =>
  (d.truncated ? { event: d.event, truncated: true, timestamp: d.timestamp, data: d.data } : { event: d.event, timestamp: d.timestamp, data: d.data }) as TicketEventPayload;

/**
 * Fan a ticket event out to the account's active webhooks subscribed to it:
 * one delivery record and one queue message each, so a slow or failing target
 * never holds up another. Idempotent by (event id, webhook id): a redelivered
 * event creates nothing new and re-sends only a delivery not attempted yet
 * (its message may never have been sent; if it was, the receiver can get the
 * event twice under the same webhook-id, as at-least-once delivery allows).
 */
export async function fanOut(detail: TicketEventDetail, queueUrl: string, { batch, now = new Date() }: FanOutOptions = {}): Promise<number> {
  const list = () => repo.listWebhooks(detail.accountId);
  const webhooks = (await (batch ? batch(`webhooks:${detail.accountId}`, list) : list())).filter((w) => subscribed(w, detail.event));
  if (!webhooks.length) return 0;
  const body = JSON.stringify(webhookBody(detail));
  await Promise.all(
    webhooks.map(async (w) => {
      const fresh: DeliveryRecord = {
        accountId: detail.accountId,
        webhookId: w.id,
        deliveryId: deliveryIdFor(detail.eventId),
        eventId: detail.eventId,
        eventType: detail.event,
        ...(detail.correlationId ? { correlationId: detail.correlationId } : {}),
        body,
        state: 'pending',
        attempts: 0,
        tries: 0,
        cycle: 0,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      };
      const { delivery, created } = await repo.createDelivery(fresh, now);
      if (created || (delivery.state === 'pending' && delivery.attempts === 0)) await enqueue(queueUrl, delivery);
    }),
  );
  return webhooks.length;
}

/** What one signed POST got: the status (null: no answer) or why none came, the receiver's Retry-After, and how long it took. */
interface PostOutcome {
  statusCode: number | null;
  error: string | null;
  retryAfterSeconds: number | null;
  durationMs: number;
}

/** Sign a body with the webhook's live secrets (both during a rotation's overlap) and POST it to its target under the policy. */
async function signedPost(webhook: WebhookRecord, eventId: string, body: string, policy: TargetPolicy, now: Date): Promise<PostOutcome> {
  const started = performance.now();
  try {
    const res = await postToTarget(webhook.targetUrl, signedHeaders(liveSecrets(webhook, now), eventId, body, now), body, policy);
    return { statusCode: res.statusCode, error: null, retryAfterSeconds: parseRetryAfter(res.headers['retry-after'], now), durationMs: Math.round(performance.now() - started) };
  } catch (err) {
    return { statusCode: null, error: (err as Error).message || (err as Error).name, retryAfterSeconds: null, durationMs: Math.round(performance.now() - started) };
  }
}

/** Re-reads allowed when concurrent deliveries move the webhook between a read and the write of a verdict (each round, one of them commits). */
const MAX_HEALTH_ROUNDS = 25;

/**
 * The failing rule's writes for one event's end on a webhook as read
 * (judgeEventEnd): the count, and when it switches the webhook off, its
 * webhook.disabled event through the outbox. None when nothing changes (a
 * success on a webhook with no failures: the common case writes nothing).
 */
function healthWrites(w: WebhookRecord, end: EventEnd, now: Date): { writes: TxWrite[]; after: Partial<WebhookRecord> | null } {
  const health = { active: w.active, consecutiveFailures: w.consecutiveFailures };
  const verdict = judgeEventEnd(health, end);
  if (!healthChanged(health, verdict)) return { writes: [], after: null };
  const disabledReason = verdict.disable ?? undefined;
  const writes = [repo.webhookHealthWrite(w, { consecutiveFailures: verdict.consecutiveFailures, disabledReason }, now)];
  if (disabledReason) {
    const data: WebhookDisabledData = { webhook: { id: w.id, name: w.name, targetUrl: w.targetUrl }, disabledReason, consecutiveFailures: verdict.consecutiveFailures };
    writes.push(...outboxWrites([newDomainEvent(w.accountId, WEBHOOK_DISABLED, data, now.toISOString())], WEBHOOK_EVENT_SOURCE));
  }
  const after = { consecutiveFailures: verdict.consecutiveFailures, version: w.version + 1, ...(disabledReason ? { active: false, disabledReason, updatedAt: now.toISOString() } : {}) };
  return { writes, after };
}

/**
 * Log the attempt and settle its delivery; when the attempt ended its event
 * (delivered, retries exhausted, 410), apply the failing rule in the same
 * transaction, conditioned on the webhook's version: a concurrent delivery
 * that moved it first makes this one re-read and re-judge, so the count stays
 * exact. `webhook` (the batch's shared read) is brought up to date, so the
 * batch's later deliveries see a webhook this one switched off.
 */
async function recordOutcome(d: DeliveryRecord, attempt: AttemptRecord, now: Date, webhook: WebhookRecord, end: EventEnd | null): Promise<void> {
  const attemptId = newId('att', now.getTime());
  let current: WebhookRecord | null = webhook;
  for (let round = 1; ; round++) {
    const { writes, after } = end && current ? healthWrites(current, end, now) : { writes: [], after: null };
    try {
      await repo.recordAttempt(d, attempt, attemptId, now, writes);
    } catch (err) {
      if (!(err instanceof repo.WebhookChangedError) || round >= MAX_HEALTH_ROUNDS) throw err;
      // Moved by another delivery or an admin (or deleted: then only the attempt is written).
      current = await repo.getWebhook(d.accountId, d.webhookId, true);
      continue;
    }
    if (current && after) {
      Object.assign(webhook, current, after);
      if (after.disabledReason) {
        recordMetric(METRICS.webhookDisabled, 1);
        logger.warn('webhook disabled', { accountId: d.accountId, webhookId: d.webhookId, disabledReason: after.disabledReason, consecutiveFailures: after.consecutiveFailures });
      }
    }
    return;
  }
}

/**
 * One delivery attempt: sign and POST the stored body; log the attempt and
 * move the delivery to the outcome judgeAttempt gives (delivery-rules.ts): a
 * 2xx succeeds; a 410 disables the webhook; anything else (status, timeout,
 * refused target) retries on the schedule until the 8th attempt, which goes
 * to the DLQ and is marked failed. An event's end (success, exhausted
 * retries, 410) moves the webhook's count of consecutive failures (judgeEventEnd).
 */
export async function attemptDelivery(msg: DeliveryMessage, config: Omit<DeliveryConfig, 'queueUrl'>, now = new Date(), batch?: BatchMemo): Promise<Outcome> {
  // The deliveries of one batch to one webhook share its read (a burst brings many at once).
  const read = () => repo.getWebhook(msg.accountId, msg.webhookId, true);
  const webhook = await (batch ? batch(`webhook:${msg.accountId}/${msg.webhookId}`, read) : read());
  if (!webhook?.active) {
    // Switched off or deleted since the event: nothing to send; the log shows why.
    await repo.cancelDelivery(msg, now);
    return { action: 'done' };
  }
  const d = await repo.beginAttempt(msg, msg.cycle, now);
  if (!d) return { action: 'done' }; // a stale or duplicate message: its delivery has moved on

  const { statusCode, error, retryAfterSeconds, durationMs } = await signedPost(webhook, d.eventId, d.body, config.policy, now);
  const { outcome, state, error: logged, nextAttemptAt, disable } = judgeAttempt({ statusCode, error, retryAfterSeconds, tries: d.tries }, { scale: config.retryScale, now });
  if (state === 'succeeded') recordMetric(METRICS.webhookSucceeded, 1);
  if (outcome.action === 'retry') recordMetric(METRICS.webhookRetried, 1);
  const attempt: AttemptRecord = {
    deliveryId: d.deliveryId,
    eventId: d.eventId,
    eventType: d.eventType,
    attempt: d.attempts,
    statusCode,
    error: logged,
    durationMs,
    at: now.toISOString(),
    state,
    nextAttemptAt,
    correlationId: msg.correlationId ?? null,
  };
  if (outcome.action === 'dead-letter') {
    // Dead-letter before the log says failed: a crash between the two repeats the last attempt and
    // dead-letters again (a duplicate in the DLQ), where the other order could drop it.
    await sendMessage({
      QueueUrl: config.dlqUrl,
      MessageBody: JSON.stringify({ ...msg, eventId: d.eventId, eventType: d.eventType, attempts: d.attempts, reason: outcome.reason, failedAt: now.toISOString() }),
    });
    recordMetric(METRICS.webhookDeadLettered, 1);
    logger.error('webhook delivery failed for good; dead-lettered', { accountId: msg.accountId, webhookId: msg.webhookId, deliveryId: d.deliveryId, eventId: d.eventId });
  }
  const end: EventEnd | null = disable ? 'gone' : outcome.action === 'dead-letter' ? 'exhausted' : state === 'succeeded' ? 'succeeded' : null;
  await recordOutcome(d, attempt, now, webhook, end);
  return outcome;
}

/**
 * A test delivery (decisions §18): one signed webhook.test to the target now,
 * under the same SSRF policy as every delivery, whether the webhook is active
 * or not. Logged like other deliveries (a finished delivery and its one
 * attempt), never retried, and outside the failing rule: a 410 here disables nothing.
 */
export async function sendTestDelivery(webhook: WebhookRecord, policy: TargetPolicy, now = new Date()): Promise<TestDelivery> {
  const eventId = newId('evt', now.getTime());
  const payload: WebhookTestEvent = { event: WEBHOOK_TEST, timestamp: now.toISOString(), data: { webhookId: webhook.id } };
  const body = JSON.stringify(payload);
  const { statusCode, error, durationMs } = await signedPost(webhook, eventId, body, policy, now);
  const delivered = isSuccess(statusCode);
  const correlationId = currentCorrelationId();
  const d: DeliveryRecord = {
    accountId: webhook.accountId,
    webhookId: webhook.id,
    deliveryId: deliveryIdFor(eventId),
    eventId,
    eventType: WEBHOOK_TEST,
    ...(correlationId ? { correlationId } : {}),
    body,
    state: delivered ? 'succeeded' : 'failed',
    attempts: 1,
    tries: 1,
    cycle: 0,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  const attempt: AttemptRecord = {
    deliveryId: d.deliveryId,
    eventId,
    eventType: WEBHOOK_TEST,
    attempt: 1,
    statusCode,
    error,
    durationMs,
    at: now.toISOString(),
    state: d.state,
    nextAttemptAt: null,
    correlationId: correlationId ?? null,
  };
  await repo.recordTestDelivery(d, attempt, newId('att', now.getTime()), now);
  return { status: delivered ? 'delivered' : 'failed', responseStatus: statusCode, durationMs, error };
}

/** Queue a finished delivery again under a new retry cycle (same body, same webhook-id), under the caller's correlation id. */
export async function redeliver(d: DeliveryRecord, queueUrl: string, now = new Date()): Promise<DeliveryRecord> {
  const restarted = await repo.restartDelivery(d, now);
  // The new cycle follows the redeliver call (the request that caused it); the record keeps the event's id.
  await enqueue(queueUrl, restarted, currentCorrelationId() ?? restarted.correlationId);
  return restarted;
}
