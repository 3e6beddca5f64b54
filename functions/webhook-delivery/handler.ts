import { deliveryConsumer } from '#shared/webhooks/consumer.ts';
import { DELIVERY_TIMEOUT_MS } from '#shared/webhooks/delivery.ts';
import { deliverySettings } from './settings.ts';

const env = deliverySettings();

/** SQS consumer of the delivery queue: signed POSTs with the retry schedule of decisions §7. */
export const handler = deliveryConsumer({
  queueUrl: env.WEBHOOK_DELIVERY_QUEUE_URL,
  dlqUrl: env.WEBHOOK_DELIVERY_DLQ_URL,
  retryScale: env.WEBHOOK_RETRY_SCALE,
  policy: { allowPrivate: env.WEBHOOK_ALLOW_PRIVATE_TARGETS, allowInsecureTls: env.WEBHOOK_ALLOW_INSECURE_TLS, timeoutMs: DELIVERY_TIMEOUT_MS },
});
