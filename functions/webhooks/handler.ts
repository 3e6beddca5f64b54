import { httpGroup } from '#shared/http/middleware.ts';
import { webhookRoutes } from '#shared/webhooks/contract.ts';
import * as webhooks from '#shared/webhooks/service.ts';
import { webhooksSettings } from './settings.ts';

/** Redelivery puts a message on the delivery queue. */
const queueUrl = webhooksSettings().WEBHOOK_DELIVERY_QUEUE_URL;

export const handler = httpGroup(webhookRoutes, {
  listWebhooks: async ({ principal }) => ({ webhooks: await webhooks.listWebhooks(principal) }),
  getWebhook: async ({ principal, params }) => ({ webhook: await webhooks.getWebhook(principal, params.id) }),
  createWebhook: async ({ principal, body }) => ({ webhook: await webhooks.createWebhook(principal, body.webhook) }),
  updateWebhook: async ({ principal, params, body }) => ({ webhook: await webhooks.updateWebhook(principal, params.id, body.webhook) }),
  deleteWebhook: async ({ principal, params }) => webhooks.deleteWebhook(principal, params.id),
  listWebhookDeliveries: async ({ principal, params, query }) => ({ deliveries: await webhooks.listDeliveryAttempts(principal, params.id, query.limit) }),
  redeliverWebhookDelivery: async ({ principal, params }) => ({ delivery: await webhooks.redeliverDelivery(principal, params.id, params.deliveryId, queueUrl) }),
});
