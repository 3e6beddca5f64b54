import { DELIVERY_TIMEOUT_MS } from '#shared/webhooks/delivery.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { webhookRoutes } from '#shared/webhooks/contract.ts';
import * as webhooks from '#shared/webhooks/service.ts';
import { webhooksSettings } from './settings.ts';

const env = webhooksSettings();
/** Redelivery puts a message on the delivery queue. */
const queueUrl = env.WEBHOOK_DELIVERY_QUEUE_URL;
/** A test delivery goes out under the delivery consumer's SSRF and TLS rules. */
const policy = { allowPrivate: env.WEBHOOK_ALLOW_PRIVATE_TARGETS, allowInsecureTls: env.WEBHOOK_ALLOW_INSECURE_TLS, timeoutMs: DELIVERY_TIMEOUT_MS };

export const handler = httpGroup(webhookRoutes, {
  listWebhooks: async ({ principal }) => ({ webhooks: await webhooks.listWebhooks(principal) }),
  getWebhook: async ({ principal, params }) => ({ webhook: await webhooks.getWebhook(principal, params.id) }),
  createWebhook: async ({ principal, body }) => {
    const created = (webhook: webhooks.CreatedWebhook) => ({ webhook });
    return created(await webhooks.createWebhook(principal, body.webhook, { answer: created }));
  },
  updateWebhook: async ({ principal, params, body }) => ({ webhook: await webhooks.updateWebhook(principal, params.id, body.webhook) }),
  rotateWebhookSecret: async ({ principal, params }) => ({ webhook: await webhooks.rotateSigningSecret(principal, params.id) }),
  testWebhook: async ({ principal, params }) => ({ delivery: await webhooks.testWebhook(principal, params.id, policy) }),
  deleteWebhook: async ({ principal, params }) => webhooks.deleteWebhook(principal, params.id),
  listWebhookDeliveries: async ({ principal, params, query }) => ({ deliveries: await webhooks.listDeliveryAttempts(principal, params.id, query.limit) }),
  redeliverWebhookDelivery: async ({ principal, params }) => ({ delivery: await webhooks.redeliverDelivery(principal, params.id, params.deliveryId, queueUrl) }),
});
