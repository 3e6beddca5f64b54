import * as z from 'zod';
import { TICKET_EVENT_TYPES } from '../tickets/event-names.ts';
import { plainText } from '../text.ts';
import { DISABLED_REASONS, WEBHOOK_TEST } from './events.ts';

export const WebhookSchema = z
  .object({
    id: z.string().describe('Prefixed whk_'),
    name: z.string(),
    targetUrl: z.string().describe('HTTPS endpoint'),
    events: z.array(z.enum(TICKET_EVENT_TYPES)).describe('Subscribed event types'),
    active: z.boolean(),
    disabledReason: z
      .enum(DISABLED_REASONS)
      .nullable()
      .describe(
        'Why the service switched the webhook off: failing (10 consecutive events exhausted their retries), gone (its target answered 410). Null when active or switched off by an admin; setting active: true clears it',
      ),
    signingSecretRotatedAt: z.iso
      .datetime()
      .nullable()
      .describe('When the signing secret was last rotated (null: never). For 24 hours after it, deliveries carry a signature with the previous secret too'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof WebhookSchema>;

export const CreatedWebhookSchema = WebhookSchema.extend({
  signingSecret: z.string().describe('`whsec_` + base64 of 32 random bytes. Returned only by create and rotate_secret: store it to verify deliveries.'),
}).meta({ id: 'CreatedWebhook' });

/** decisions §7: https only; no credentials in the URL (they would be logged and shown back). */
const targetUrl = z
  .string()
  .trim()
  .max(2048)
  .refine((v) => URL.canParse(v), 'must be an absolute URL')
  .refine((v) => !URL.canParse(v) || new URL(v).protocol === 'https:', 'must use https://')
  .refine((v) => !URL.canParse(v) || (!new URL(v).username && !new URL(v).password), 'must not contain credentials')
  .refine((v) => !URL.canParse(v) || new URL(v).hostname !== '', 'must name a host')
  // The same rule where generated clients and validators see it (the refinements above word the messages).
  .meta({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]://[^/?#@\\s]+' });

/** Non-empty, of the five event names; repeats are folded. */
const events = z
  .array(z.enum(TICKET_EVENT_TYPES))
  .min(1, 'must name at least one event')
  .transform((e) => [...new Set(e)]);

const name = plainText(128);

export const CreateWebhookBodySchema = z.object({ webhook: z.object({ name, targetUrl, events, active: z.boolean().default(true) }) }).meta({ id: 'CreateWebhookRequest' });
export type CreateWebhookInput = z.infer<typeof CreateWebhookBodySchema>['webhook'];

export const UpdateWebhookBodySchema = z
  .object({ webhook: z.object({ name: name.optional(), targetUrl: targetUrl.optional(), events: events.optional(), active: z.boolean().optional() }) })
  .meta({ id: 'UpdateWebhookRequest', description: 'All fields optional; only the given ones change.' });
export type UpdateWebhookInput = z.infer<typeof UpdateWebhookBodySchema>['webhook'];

export const WebhookIdParamsSchema = z.object({ id: z.string().min(1).max(64) });
export const DeliveryParamsSchema = z.object({ id: z.string().min(1).max(64), deliveryId: z.string().min(1).max(64) });

export const DELIVERY_STATES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** What a delivery can carry: a ticket event, or a test delivery's webhook.test. */
export const DELIVERED_EVENT_TYPES = [...TICKET_EVENT_TYPES, WEBHOOK_TEST] as const;
export type DeliveredEventType = (typeof DELIVERED_EVENT_TYPES)[number];

/** The answer of POST /webhooks/{id}/test: what the one attempt got. */
export const TestDeliverySchema = z
  .object({
    status: z.enum(['delivered', 'failed']).describe('delivered: the target answered 2xx within 10 s'),
    responseStatus: z.number().int().nullable().describe('HTTP status the target answered; null when no answer (see error)'),
    durationMs: z.number().int().min(0),
    error: z.string().nullable().describe('Why no HTTP answer came (refused target, timeout, TLS...); null when the target answered'),
  })
  .meta({ id: 'WebhookTestDelivery' });
export type TestDelivery = z.infer<typeof TestDeliverySchema>;

export const DeliveryAttemptSchema = z
  .object({
    deliveryId: z.string().describe('Prefixed dlv_: one event sent to one webhook; redeliver takes this id'),
    eventId: z.string().describe('The event id, sent as the webhook-id header on every attempt'),
    eventType: z.enum(DELIVERED_EVENT_TYPES),
    attempt: z.number().int().min(1).describe('1 for the first attempt of the delivery, counting redeliveries'),
    statusCode: z.number().int().nullable().describe('HTTP status the target answered; null when no answer (see error)'),
    error: z.string().nullable().describe('Why the attempt failed without an HTTP answer (timeout, refused target, TLS...)'),
    durationMs: z.number().int().min(0),
    at: z.iso.datetime(),
    state: z.enum(DELIVERY_STATES).describe('Outcome of this attempt: succeeded; retrying (another attempt is scheduled); failed (gave up, or 410 disabled the webhook)'),
    nextAttemptAt: z.iso.datetime().nullable().describe('When the next attempt is due, for state retrying'),
    correlationId: z
      .string()
      .nullable()
      .describe(
        'The correlation id the attempt ran under: the x-request-id of the API call that caused the event (or of the redeliver call), so one request can be followed from the API to the receiver; null for attempts logged before it was kept',
      ),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });
export type DeliveryAttempt = z.infer<typeof DeliveryAttemptSchema>;

export const ListDeliveriesQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('Most recent attempts to return (1-100, default 50)'),
});

export const DeliverySchema = z
  .object({
    deliveryId: z.string(),
    webhookId: z.string(),
    eventId: z.string(),
    eventType: z.enum(DELIVERED_EVENT_TYPES),
    state: z.enum(DELIVERY_STATES),
    attempts: z.number().int().min(0),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookDelivery' });
export type Delivery = z.infer<typeof DeliverySchema>;
