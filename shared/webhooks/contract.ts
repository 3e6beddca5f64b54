import * as z from '../zod.ts';
import { defineRoutes } from '../http/contract.ts';
import {
  CreatedWebhookSchema,
  CreateWebhookBodySchema,
  DeliveryAttemptSchema,
  DeliveryParamsSchema,
  DeliverySchema,
  ListDeliveriesQuerySchema,
  TestDeliverySchema,
  UpdateWebhookBodySchema,
  WebhookIdParamsSchema,
  WebhookSchema,
} from './model.ts';

const BASE = '/helpdesk/api/v1/webhooks';
const WebhookEnvelope = z.meta(z.object({ webhook: WebhookSchema }), { id: 'WebhookResponse' });

const DELIVERY_NOTE =
  'Each ticket event is POSTed to every active webhook subscribed to it, signed per Standard Webhooks (webhook-id = event id, webhook-timestamp, webhook-signature v1 HMAC-SHA256). ' +
  'Any 2xx within 10 s succeeds; otherwise retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (up to 20% jitter, a longer Retry-After honoured). ' +
  'A 410 disables the webhook (disabledReason gone); so do 10 consecutive events that each exhausted their retries (disabledReason failing), with a webhook.disabled event and an email to the admins.';

const WithSecretEnvelope = z.meta(z.object({ webhook: CreatedWebhookSchema }), { id: 'CreatedWebhookResponse' });

/** Webhooks (api-spec "Webhook endpoints"; decisions §3, §7, §18). Every endpoint needs the admin role. */
export const webhookRoutes = defineRoutes([
  {
    operationId: 'listWebhooks',
    method: 'GET',
    path: BASE,
    group: 'webhooks',
    summary: 'List webhooks',
    access: 'admin',
    success: { status: 200, description: 'Every webhook of the account, oldest first (no signing secrets)', schema: z.meta(z.object({ webhooks: z.array(WebhookSchema) }), { id: 'WebhookList' }) },
    errors: [403],
  },
  {
    operationId: 'getWebhook',
    method: 'GET',
    path: `${BASE}/{id}`,
    group: 'webhooks',
    summary: 'Get a webhook',
    access: 'admin',
    params: WebhookIdParamsSchema,
    success: { status: 200, description: 'The webhook', schema: WebhookEnvelope },
    errors: [403, 404],
  },
  {
    operationId: 'createWebhook',
    method: 'POST',
    path: BASE,
    group: 'webhooks',
    summary: 'Create a webhook',
    description: `targetUrl must be https://; events a non-empty array of ticket.created, ticket.updated, ticket.deleted, ticket.assignment.changed, ticket.resolved; active defaults to true. The answer carries signingSecret, shown only here. ${DELIVERY_NOTE}`,
    access: 'admin',
    body: CreateWebhookBodySchema,
    wrapper: 'webhook',
    success: { status: 201, description: 'The created webhook with its signing secret', schema: WithSecretEnvelope },
    errors: [403, 422],
  },
  {
    operationId: 'updateWebhook',
    method: 'PUT',
    path: `${BASE}/{id}`,
    group: 'webhooks',
    summary: 'Update a webhook',
    description:
      'Only the given fields change (name, events, active, and targetUrl, which must stay https://). The signing secret changes only by rotate_secret. Switching active on or off clears disabledReason and the count of consecutive failures.',
    access: 'admin',
    params: WebhookIdParamsSchema,
    body: UpdateWebhookBodySchema,
    wrapper: 'webhook',
    success: { status: 200, description: 'The updated webhook', schema: WebhookEnvelope },
    errors: [403, 404, 409, 422],
  },
  {
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    path: `${BASE}/{id}/rotate_secret`,
    group: 'webhooks',
    summary: "Rotate a webhook's signing secret",
    description:
      'Answers the webhook with a new signingSecret, shown only here. For the next 24 hours every delivery carries two signatures in webhook-signature, `v1,<new> v1,<old>` (space separated, as Standard Webhooks allows), so a receiver holding either secret verifies it; then only the new one. ' +
      'A second rotation within the 24 hours drops the oldest secret at once. Audited as signingSecretRotatedAt, never a secret.',
    access: 'admin',
    params: WebhookIdParamsSchema,
    success: { status: 200, description: 'The webhook with its new signing secret', schema: WithSecretEnvelope },
    errors: [403, 404, 409],
  },
  {
    operationId: 'testWebhook',
    method: 'POST',
    path: `${BASE}/{id}/test`,
    group: 'webhooks',
    summary: 'Send a test delivery',
    description:
      'Sends one signed webhook.test event (`{event: "webhook.test", timestamp, data: {webhookId}}`, a fresh webhook-id) to the target now, active or not, and answers what came back. ' +
      'The SSRF rules of every delivery apply (a refused target fails without a request). Logged in the delivery log like other deliveries; never retried, never redelivered, and outside the failing rule (a 410 here disables nothing).',
    access: 'admin',
    params: WebhookIdParamsSchema,
    success: { status: 200, description: 'The outcome of the one attempt', schema: z.meta(z.object({ delivery: TestDeliverySchema }), { id: 'WebhookTestDeliveryResponse' }) },
    errors: [403, 404],
  },
  {
    operationId: 'deleteWebhook',
    method: 'DELETE',
    path: `${BASE}/{id}`,
    group: 'webhooks',
    summary: 'Delete a webhook',
    description: 'Deliveries still queued for it are dropped (recorded as cancelled).',
    access: 'admin',
    params: WebhookIdParamsSchema,
    success: { status: 204, description: 'Deleted' },
    errors: [403, 404],
  },
  {
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: `${BASE}/{id}/deliveries`,
    group: 'webhooks',
    summary: 'Delivery log of a webhook',
    description: 'Recent delivery attempts, newest first: which event, which attempt, the status code or error, how long it took, and the outcome. Kept 30 days.',
    access: 'admin',
    params: WebhookIdParamsSchema,
    query: ListDeliveriesQuerySchema,
    success: { status: 200, description: 'Recent attempts', schema: z.meta(z.object({ deliveries: z.array(DeliveryAttemptSchema) }), { id: 'WebhookDeliveryLog' }) },
    errors: [400, 403, 404],
  },
  {
    operationId: 'redeliverWebhookDelivery',
    method: 'POST',
    path: `${BASE}/{id}/deliveries/{deliveryId}/redeliver`,
    group: 'webhooks',
    summary: 'Send a delivery again',
    description:
      'Queues the same event body again, with the same webhook-id (the event id), under a fresh retry schedule. Allowed once the delivery has finished (succeeded, failed or cancelled); while it is still being retried: 409 CONFLICT. The webhook must be active (409 otherwise): a webhook switched off keeps its undelivered events in the log, to redeliver once it is active again. A test delivery is never redelivered (409).',
    access: 'admin',
    params: DeliveryParamsSchema,
    success: { status: 202, description: 'Queued', schema: z.meta(z.object({ delivery: DeliverySchema }), { id: 'WebhookDeliveryResponse' }) },
    errors: [403, 404, 409],
  },
]);
