import { recordMetric } from '../observability.ts';

/**
 * One CloudWatch metric (namespace SupportDesk, dimension Stack), written at
 * once as an embedded-metric-format line through Powertools: Lambda's log
 * pipeline turns it into a metric, with no SDK call on the hot path. Off
 * outside Lambda.
 */
export function emitMetric(name: string, value: number, unit: 'Count' | 'Seconds' = 'Count'): void {
  recordMetric(name, value, unit);
}

/** Metric names: the stack alarms on some (infra/stack.ts); the rest are business counts for dashboards. */
export const METRICS = {
  outboxAge: 'OutboxOldestPendingAgeSeconds',
  outboxParked: 'OutboxEventsParked',
  /** Events the bus accepted, from the stream publisher and the sweeper alike. */
  outboxPublished: 'OutboxEventsPublished',
  consumerFailures: 'ConsumerMessageFailures',
  webhookSucceeded: 'WebhookDeliveriesSucceeded',
  /** Failed attempts with another one scheduled. */
  webhookRetried: 'WebhookDeliveriesRetried',
  /** Deliveries given up after the last attempt (alarmed through the delivery DLQ's depth). */
  webhookDeadLettered: 'WebhookDeliveriesDeadLettered',
  /** A change of credentials whose authorizer-cache flush failed after retries (alarmed: revocation waits for the TTL). */
  authorizerCacheFlushFailed: 'AuthorizerCacheFlushFailed',
} as const;
