/**
 * Every metric name, written only through `recordMetric` (shared/observability.ts).
 * The stack alarms on some (infra/operations.ts); the rest are business counts for
 * dashboards. No imports, so the CDK app reads the names without the code that
 * writes them.
 */
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
  /** Webhooks the service switched off (10 events in a row exhausted their retries, or a 410): each also emits webhook.disabled. */
  webhookDisabled: 'WebhooksDisabled',
  /** A change of credentials whose authorizer-cache flush failed after retries (alarmed: revocation waits for the TTL). */
  authorizerCacheFlushFailed: 'AuthorizerCacheFlushFailed',
  /** Requests refused by the per-account rate limit (shared/http/middleware.ts). */
  requestsRateLimited: 'RequestsRateLimited',
  /** Inbound mail (decisions §17): made into tickets or replies, received twice, quarantined (spam or virus), or for no account. */
  mailReceived: 'InboundMailReceived',
  mailDuplicate: 'InboundMailDuplicates',
  mailQuarantined: 'InboundMailQuarantined',
  mailDropped: 'InboundMailDropped',
  /** Addresses marked undeliverable by an SES bounce or complaint. */
  mailUndeliverable: 'MailAddressesUndeliverable',
} as const;

export type MetricName = (typeof METRICS)[keyof typeof METRICS];
