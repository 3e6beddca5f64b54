/**
 * The message resource as the API answers it and its events carry it: what consumers
 * parse and the docs publish, without the request schemas (model.ts, which
 * re-exports these). A consumer's cold start builds these only.
 */
import * as z from '../zod.ts';
import { AttachmentSchema } from '../attachments/resource.ts';
import { CONTROL_CHARACTERS_MESSAGE, textPattern } from '../text.ts';

export const MESSAGE_TYPES = ['request', 'response', 'note'] as const;

/** A cc's display name goes into the mail's header: a name like any other (shared/text.ts), empty allowed. */
export const CcSchema = z.meta(
  z.object({ email: z.email().check(z.maxLength(254)), name: z.optional(z.nullable(z.string().check(z.maxLength(128), z.regex(textPattern(), CONTROL_CHARACTERS_MESSAGE)))) }),
  { id: 'MessageCc' },
);

export const MESSAGE_CHANNELS = ['api', 'email'] as const;
export const EMAIL_DELIVERY_STATUSES = ['queued', 'sent', 'not_sent', 'bounced', 'complained'] as const;

/** What became of a response's email (decisions §17; docs/email.md). */
export const EmailDeliverySchema = z.meta(
  z.object({
    status: z.describe(
      z.enum(EMAIL_DELIVERY_STATUSES),
      'queued: waiting for the sender; sent: handed to the mail service; not_sent: nobody it could go to (no requester, or every address undeliverable); bounced / complained: SES reported a hard bounce or a complaint',
    ),
    to: z.describe(z.array(z.string()), 'The addresses it was (or is to be) sent to'),
    cc: z.array(z.string()),
    skipped: z.describe(z.array(z.string()), 'Addresses left out because they are marked undeliverable (an earlier hard bounce or complaint)'),
    reason: z.nullable(z.string()),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'EmailDelivery' },
);
export type EmailDelivery = z.infer<typeof EmailDeliverySchema>;

export const MessageSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed msg_'),
    ticketId: z.string(),
    type: z.enum(MESSAGE_TYPES),
    content: z.describe(z.string(), 'Sanitized HTML'),
    textContent: z.string(),
    authorId: z.string(),
    attachments: z.describe(z.array(AttachmentSchema), 'Each with a fresh presigned download URL (15 minutes)'),
    ccs: z.array(CcSchema),
    recipients: z.describe(z.array(z.string()), 'Explicit recipients (forwards); empty means the requester'),
    isForward: z.boolean(),
    channel: z.describe(z.enum(MESSAGE_CHANNELS), 'How the message came: through the API, or as an inbound mail (decisions §17)'),
    emailDelivery: z.describe(z.nullable(EmailDeliverySchema), 'The email of a response sent with send_email (null for any other message); updated as it is sent, bounces or draws a complaint'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'Message' },
);
export type Message = z.infer<typeof MessageSchema>;

/** A message as message.created carries it: attachments without download URLs (a URL would expire long before a redelivery). */
export const MessageInEventSchema = z.meta(
  z.extend(MessageSchema, {
    attachments: z.array(z.pick(AttachmentSchema, { id: true, name: true, size: true, contentType: true })),
  }),
  { id: 'MessageInEvent' },
);
export type MessageInEvent = z.infer<typeof MessageInEventSchema>;
