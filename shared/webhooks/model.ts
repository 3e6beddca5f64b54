import * as z from '../zod.ts';
import { TICKET_EVENT_TYPES } from '../tickets/event-names.ts';
import { plainText } from '../text.ts';
import { DISABLED_REASONS, WEBHOOK_TEST } from './events.ts';

export const WebhookSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed whk_'),
    name: z.string(),
    targetUrl: z.describe(z.string(), 'HTTPS endpoint'),
    events: z.describe(z.array(z.enum(TICKET_EVENT_TYPES)), 'Subscribed event types'),
    active: z.boolean(),
    disabledReason: z.describe(
      z.nullable(z.enum(DISABLED_REASONS)),
      'Why the service switched the webhook off: failing (10 consecutive events exhausted their retries), gone (its target answered 410). Null when active or switched off by an admin; setting active: true clears it',
    ),
    signingSecretRotatedAt: z.describe(
      z.nullable(z.iso.datetime()),
      'When the signing secret was last rotated (null: never). For 24 hours after it, deliveries carry a signature with the previous secret too',
    ),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'Webhook' },
);
export type Webhook = z.infer<typeof WebhookSchema>;

export const CreatedWebhookSchema = z.meta(
  z.extend(WebhookSchema, {
    signingSecret: z.describe(z.string(), '`whsec_` + base64 of 32 random bytes. Returned only by create and rotate_secret: store it to verify deliveries.'),
  }),
  { id: 'CreatedWebhook' },
);

/** decisions §7: https only; no credentials in the URL (they would be logged and shown back). */
const targetUrl = z.meta(
  z.string().check(
    z.trim(),
    z.maxLength(2048),
    z.refine((v) => URL.canParse(v), 'must be an absolute URL'),
    z.refine((v) => !URL.canParse(v) || new URL(v).protocol === 'https:', 'must use https://'),
    z.refine((v) => !URL.canParse(v) || (!new URL(v).username && !new URL(v).password), 'must not contain credentials'),
    z.refine((v) => !URL.canParse(v) || new URL(v).hostname !== '', 'must name a host'),
  ),
  { format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]://[^/?#@\\s]+' },
);

/** Non-empty, of the five event names; repeats are folded. */
const events = z.pipe(
  z.array(z.enum(TICKET_EVENT_TYPES)).check(z.minLength(1, 'must name at least one event')),
  z.transform((e) => [...new Set(e)]),
);

const name = plainText(128);

export const CreateWebhookBodySchema = z.meta(z.object({ webhook: z.object({ name, targetUrl, events, active: z._default(z.boolean(), true) }) }), { id: 'CreateWebhookRequest' });
export type CreateWebhookInput = z.infer<typeof CreateWebhookBodySchema>['webhook'];

export const UpdateWebhookBodySchema = z.meta(
  z.object({ webhook: z.object({ name: z.optional(name), targetUrl: z.optional(targetUrl), events: z.optional(events), active: z.optional(z.boolean()) }) }),
  { id: 'UpdateWebhookRequest', description: 'All fields optional; only the given ones change.' },
);
export type UpdateWebhookInput = z.infer<typeof UpdateWebhookBodySchema>['webhook'];

export const WebhookIdParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });
export const DeliveryParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)), deliveryId: z.string().check(z.minLength(1), z.maxLength(64)) });

export const DELIVERY_STATES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** What a delivery can carry: a ticket event, or a test delivery's webhook.test. */
export const DELIVERED_EVENT_TYPES = [...TICKET_EVENT_TYPES, WEBHOOK_TEST] as const;
export type DeliveredEventType = (typeof DELIVERED_EVENT_TYPES)[number];

/** The answer of POST /webhooks/{id}/test: what the one attempt got. */
export const TestDeliverySchema = z.meta(
  z.object({
    status: z.describe(z.enum(['delivered', 'failed']), 'delivered: the target answered 2xx within 10 s'),
    responseStatus: z.describe(z.nullable(z.number().check(z.int())), 'HTTP status the target answered; null when no answer (see error)'),
    durationMs: z.number().check(z.int(), z.gte(0)),
    error: z.describe(z.nullable(z.string()), 'Why no HTTP answer came (refused target, timeout, TLS...); null when the target answered'),
  }),
  { id: 'WebhookTestDelivery' },
);
export type TestDelivery = z.infer<typeof TestDeliverySchema>;

export const DeliveryAttemptSchema = z.meta(
  z.object({
    deliveryId: z.describe(z.string(), 'Prefixed dlv_: one event sent to one webhook; redeliver takes this id'),
    eventId: z.describe(z.string(), 'The event id, sent as the webhook-id header on every attempt'),
    eventType: z.enum(DELIVERED_EVENT_TYPES),
    attempt: z.describe(z.number().check(z.int(), z.gte(1)), '1 for the first attempt of the delivery, counting redeliveries'),
    statusCode: z.describe(z.nullable(z.number().check(z.int())), 'HTTP status the target answered; null when no answer (see error)'),
    error: z.describe(z.nullable(z.string()), 'Why the attempt failed without an HTTP answer (timeout, refused target, TLS...)'),
    durationMs: z.number().check(z.int(), z.gte(0)),
    at: z.iso.datetime(),
    state: z.describe(z.enum(DELIVERY_STATES), 'Outcome of this attempt: succeeded; retrying (another attempt is scheduled); failed (gave up, or 410 disabled the webhook)'),
    nextAttemptAt: z.describe(z.nullable(z.iso.datetime()), 'When the next attempt is due, for state retrying'),
    correlationId: z.describe(
      z.nullable(z.string()),
      'The correlation id the attempt ran under: the x-request-id of the API call that caused the event (or of the redeliver call), so one request can be followed from the API to the receiver; null for attempts logged before it was kept',
    ),
  }),
  { id: 'WebhookDeliveryAttempt' },
);
export type DeliveryAttempt = z.infer<typeof DeliveryAttemptSchema>;

export const ListDeliveriesQuerySchema = z.object({
  limit: z.describe(z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 50), 'Most recent attempts to return (1-100, default 50)'),
});

export const DeliverySchema = z.meta(
  z.object({
    deliveryId: z.string(),
    webhookId: z.string(),
    eventId: z.string(),
    eventType: z.enum(DELIVERED_EVENT_TYPES),
    state: z.enum(DELIVERY_STATES),
    attempts: z.number().check(z.int(), z.gte(0)),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'WebhookDelivery' },
);
export type Delivery = z.infer<typeof DeliverySchema>;
