import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { BatchMemo } from '../events/consumer.ts';
import { METRICS } from '../events/metrics.ts';
import { sqs } from '../events/sqs.ts';
import type { TicketEventDetail, TicketEventPayload } from '../events/ticket-events.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { currentCorrelationId, recordMetric } from '../observability.ts';
import { judgeAttempt, parseRetryAfter, type Outcome } from './delivery-rules.ts';
import * as repo from './repository.ts';
import type { DeliveryRecord, WebhookRecord } from './repository.ts';
import { signedHeaders } from './signing.ts';
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
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message), MessageGroupId: d.accountId }));
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

/**
 * One delivery attempt: sign and POST the stored body; log the attempt and
 * move the delivery to the outcome judgeAttempt gives (delivery-rules.ts): a
 * 2xx succeeds; a 410 disables the webhook; anything else (status, timeout,
 * refused target) retries on the schedule until the 8th attempt, which goes
 * to the DLQ and is marked failed.
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

  let statusCode: number | null = null;
  let error: string | null = null;
  let retryAfter: number | null = null;
  const started = performance.now();
  try {
    const res = await postToTarget(webhook.targetUrl, signedHeaders(webhook.signingSecret, d.eventId, d.body, now), d.body, config.policy);
    statusCode = res.statusCode;
    retryAfter = parseRetryAfter(res.headers['retry-after'], now);
  } catch (err) {
    error = (err as Error).message || (err as Error).name;
  }
  const durationMs = Math.round(performance.now() - started);
  const { outcome, state, error: logged, nextAttemptAt, disable } = judgeAttempt({ statusCode, error, retryAfterSeconds: retryAfter, tries: d.tries }, { scale: config.retryScale, now });
  if (state === 'succeeded') recordMetric(METRICS.webhookSucceeded, 1);
  if (outcome.action === 'retry') recordMetric(METRICS.webhookRetried, 1);
  if (disable) {
    await repo.deactivateWebhook(msg.accountId, msg.webhookId, now);
    logger.warn('webhook disabled by 410', { accountId: msg.accountId, webhookId: msg.webhookId });
  }
  const attempt = {
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
  } as const;
  if (outcome.action === 'dead-letter') {
    // Dead-letter before the log says failed: a crash between the two repeats the last attempt and
    // dead-letters again (a duplicate in the DLQ), where the other order could drop it.
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: config.dlqUrl,
        MessageBody: JSON.stringify({ ...msg, eventId: d.eventId, eventType: d.eventType, attempts: d.attempts, reason: outcome.reason, failedAt: now.toISOString() }),
      }),
    );
    recordMetric(METRICS.webhookDeadLettered, 1);
    logger.error('webhook delivery failed for good; dead-lettered', { accountId: msg.accountId, webhookId: msg.webhookId, deliveryId: d.deliveryId, eventId: d.eventId });
  }
  await repo.recordAttempt(d, attempt, newId('att', now.getTime()), now);
  return outcome;
}

/** Queue a finished delivery again under a new retry cycle (same body, same webhook-id), under the caller's correlation id. */
export async function redeliver(d: DeliveryRecord, queueUrl: string, now = new Date()): Promise<DeliveryRecord> {
  const restarted = await repo.restartDelivery(d, now);
  // The new cycle follows the redeliver call (the request that caused it); the record keeps the event's id.
  await enqueue(queueUrl, restarted, currentCorrelationId() ?? restarted.correlationId);
  return restarted;
}
