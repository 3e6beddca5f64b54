import * as z from '../zod.ts';
import { domainEventDetail } from '../events/detail.ts';

/** EventBridge source of webhook events: webhook.disabled, published for subscribers and emailed to the account's admins. */
export const WEBHOOK_EVENT_SOURCE = 'support-desk.webhooks';
export const WEBHOOK_DISABLED = 'webhook.disabled';
/** The event a test delivery sends (POST /webhooks/:id/test); never on the bus. */
export const WEBHOOK_TEST = 'webhook.test';

/** Why the service switched a webhook off (decisions §18): failing (10 events in a row exhausted their retries) or gone (its target answered 410). */
export const DISABLED_REASONS = ['failing', 'gone'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** webhook.disabled: which webhook, why, and how many events in a row had exhausted their retries when it was switched off. */
export const WebhookDisabledDataSchema = z.object({
  webhook: z.object({ id: z.string(), name: z.string(), targetUrl: z.string() }),
  disabledReason: z.describe(z.enum(DISABLED_REASONS), 'failing: 10 consecutive events exhausted their retries; gone: the target answered 410'),
  consecutiveFailures: z.describe(z.number().check(z.int(), z.gte(0)), 'Events in a row that exhausted their retries with no success in between (10 for failing; those before the 410 for gone)'),
});
export type WebhookDisabledData = z.infer<typeof WebhookDisabledDataSchema>;

/** EventBridge `detail` of webhook.disabled (same envelope as every domain event). */
export const WebhookDisabledDetailSchema = z.meta(domainEventDetail(WEBHOOK_DISABLED, WebhookDisabledDataSchema), { id: 'WebhookDisabledEventDetail' });

/** The body of a test delivery, shaped like every webhook body: `{event, timestamp, data}`. */
export const WebhookTestEventSchema = z.meta(z.object({ event: z.literal(WEBHOOK_TEST), timestamp: z.iso.datetime(), data: z.object({ webhookId: z.string() }) }), {
  id: 'WebhookTestEvent',
  description: 'Sent by POST /webhooks/{id}/test only: signed like every delivery, never retried',
});
export type WebhookTestEvent = z.infer<typeof WebhookTestEventSchema>;
